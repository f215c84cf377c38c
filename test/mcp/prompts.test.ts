/**
 * What Limbic tells an agent (issue 28): the server's instructions, short and naming the tools they
 * send the agent to, and the two prompts, listed with their arguments and rendered, through a real
 * MCP client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { harness, type EraHarness } from '../helpers/fixtures.js';
import { ERAS } from '../helpers/mcp-eras.js';

let h: EraHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.each(ERAS)('$name', ({ era }) => {
  describe('instructions and prompts', () => {
    it('sends instructions at the handshake: when to search, what to save, how to name, how to supersede', async () => {
      h = await harness({ era });
      const instructions = h.client.getInstructions() ?? '';
      expect(instructions).toMatch(/search_semantic/);
      expect(instructions).toMatch(/open_nodes/);
      expect(instructions).toMatch(/add_observations/);
      expect(instructions).toMatch(/supersedes/);
      expect(instructions).toMatch(/named as people name it/);
      // They ride in every conversation: at most about 250 tokens (4 characters a token).
      expect(instructions.length).toBeLessThanOrEqual(1_000);
      // Every tool they name exists.
      const tools = new Set((await h.client.listTools()).tools.map((t) => t.name));
      for (const named of instructions.match(/\b[a-z]+_[a-z_]+\b/g) ?? []) if (!named.includes('works_on')) expect(tools).toContain(named);
    });

    it('lists recall and remember with their arguments', async () => {
      h = await harness({ era });
      const { prompts } = await h.client.listPrompts();
      const byName = new Map(prompts.map((p) => [p.name, p]));
      expect([...byName.keys()].sort()).toEqual(['recall', 'remember']);
      expect(byName.get('recall')?.arguments).toEqual([expect.objectContaining({ name: 'topic', required: true })]);
      expect(byName.get('remember')?.arguments).toEqual([expect.objectContaining({ name: 'focus', required: false })]);
      expect(byName.get('recall')?.title).toBe('Recall what Limbic knows');
    });

    it('renders recall for a topic, and remember with and without a focus', async () => {
      h = await harness({ era });
      const recall = await h.client.getPrompt({ name: 'recall', arguments: { topic: 'Project Atlas' } });
      const text = (m: (typeof recall.messages)[number]) => (m.content.type === 'text' ? m.content.text : '');
      expect(recall.messages).toHaveLength(1);
      expect(recall.messages[0]?.role).toBe('user');
      expect(text(recall.messages[0]!)).toMatch(/^Recall what the memory knows about: Project Atlas/);
      expect(text(recall.messages[0]!)).toMatch(/search_semantic.*\n.*open_nodes/s);

      const all = await h.client.getPrompt({ name: 'remember', arguments: {} });
      expect(text(all.messages[0]!)).toMatch(/^Save to the memory the facts of this conversation worth keeping\.\n/);
      const focused = await h.client.getPrompt({ name: 'remember', arguments: { focus: 'the trip to Lisbon' } });
      expect(text(focused.messages[0]!)).toMatch(/worth keeping, about: the trip to Lisbon\./);
      expect(text(focused.messages[0]!)).toMatch(/supersedes/);
    });

    it('refuses recall without a topic', async () => {
      h = await harness({ era });
      await expect(h.client.getPrompt({ name: 'recall', arguments: {} })).rejects.toThrow(/topic/);
    });
  });
});
