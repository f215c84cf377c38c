/**
 * The view of Limbic's MCP App (issue 28, item 3; docs/mcp-app.md) in a real browser, as a host
 * shows it: the built `limbic` over stdio with the real model answers hybrid_search,
 * search_semantic and open_nodes; a host page in chromium (Debian's, driven by playwright-core)
 * loads the ui:// resource into a sandboxed iframe under the spec's restrictive CSP and hands it
 * each call's arguments and result through ext-apps' AppBridge. What renders is checked against the
 * answer: each result's legs, factors and sentence; open_nodes' neighbourhood, node by node and
 * edge by edge. Nothing may be fetched. Skips, saying why, where /usr/bin/chromium is absent.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { build } from 'esbuild';
import type { FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, CHROMIUM, CHROMIUM_PRESENT, launchChromium, type Browser } from '../helpers/chromium.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/fixtures.js';
import { startStdioLimbic, type StdioLimbic } from '../helpers/fuzz-calls.js';

if (!CHROMIUM_PRESENT)
  console.warn(`MCP App view tests skipped: ${CHROMIUM} is absent (install Debian's chromium: apt-get install -y chromium)`);

const URI = 'ui://limbic/explain.html';
/** The spec's default CSP for a view that declares no domain (MCP Apps 2026-01-26, "Host Behavior"). */
const CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'";

/** The page's number format (web/why.js `fmt`), to read the factors as the view prints them. */
const fmt = (n: number, digits = 3): string => Number(n.toFixed(digits)).toString();

interface HybridScores {
  final: number;
  fts_rank: number | null;
  semantic_rank: number | null;
  limbic: {
    importance: number;
    usage_lift: number;
    usage_lift_base_level: number;
    usage_lift_refinding: number;
    usage_places: number;
  } | null;
}
interface HybridAnswer {
  results: { name: string; scores: HybridScores }[];
  stats?: { fusion_stats: { documents_in_both: number } };
}
interface SemanticAnswer {
  mode: string;
  results: { name: string; limbic_score: number; distance?: number; scoring: { importance: number } }[];
}
interface Graph {
  entities: { name: string; observations: string[] }[];
  relations: { from: string; to: string; relationType: string }[];
}

/** A host: one sandboxed iframe per tool call, joined to the page by ext-apps' AppBridge. */
const HOST_SCRIPT = `
window.mount = async ({ id, html, csp, tool, args, result }) => {
  const { AppBridge, PostMessageTransport } = window.McpHost;
  const iframe = document.createElement('iframe');
  iframe.id = id;
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.cssText = 'width: 900px; height: 700px; border: 1px solid #ccc; display: block';
  document.body.append(iframe);
  // In sight, as a chat shows its newest message: chromium does not lay out an off-screen frame.
  iframe.scrollIntoView();
  const bridge = new AppBridge(null, { name: 'limbic-test-host', version: '1.0.0' }, {}, {
    hostContext: { theme: 'light', displayMode: 'inline', toolInfo: { tool: { name: tool, inputSchema: { type: 'object' } } } },
  });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  const sizes = (window.sizes ??= {});
  bridge.onsizechange = (size) => { sizes[id] = size; };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html.replace('<head>', '<head><meta http-equiv="Content-Security-Policy" content="' + csp + '">');
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  return { app: bridge.getAppVersion() };
};`;

describe.skipIf(!CHROMIUM_PRESENT)('the MCP App view in chromium, fed real answers', () => {
  const tmp = tempDir('limbic-app-');
  let server: StdioLimbic;
  let html: string;
  let browser: Browser | undefined;
  let page: Page;
  const fetched: string[] = [];
  const consoleErrors: string[] = [];

  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
    const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result;
  };

  /** Shows `result` in a new view and waits until it has rendered. */
  async function show(id: string, tool: string, args: Record<string, unknown>, result: CallToolResult): Promise<FrameLocator> {
    const mounted = (await page.evaluate(
      async (input) => (globalThis as unknown as { mount: (i: unknown) => Promise<unknown> }).mount(input),
      {
        id,
        html,
        csp: CSP,
        tool,
        args,
        result: JSON.parse(JSON.stringify(result)) as unknown,
      },
    )) as { app: { name: string } | undefined };
    expect(mounted.app?.name).toBe('Limbic');
    const frame = page.frameLocator(`#${id}`);
    await frame
      .locator('#status')
      .filter({ hasNotText: /Waiting|Searching|Opening/ })
      .waitFor();
    // The view tells the host its rendered height (ext-apps' autoResize), so an inline host fits it.
    const height = () =>
      page.evaluate((key) => (globalThis as unknown as { sizes: Record<string, { height?: number }> }).sizes[key]?.height ?? 0, id);
    await expect.poll(height).toBeGreaterThan(200);
    return frame;
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startStdioLimbic(CLI, join(tmp.dir, 'memory.db'), []); // the real model
    await call('create_entities', {
      entities: [
        { name: 'Tomato', entityType: 'plant', observations: ['needs full sun', 'water at the roots in the morning'] },
        { name: 'Basil', entityType: 'plant', observations: ['grows well next to tomatoes', 'keeps aphids away'] },
        { name: 'Greenhouse', entityType: 'place', observations: ['south-facing, built in 2024'] },
        { name: 'Aphids', entityType: 'pest', observations: ['small green insects on young leaves'] },
        { name: 'Compost', entityType: 'practice', observations: ['kitchen scraps turned every week'] },
      ],
    });
    await call('create_relations', {
      relations: [
        { from: 'Basil', to: 'Tomato', relationType: 'companion of' },
        { from: 'Tomato', to: 'Greenhouse', relationType: 'grows in' },
        { from: 'Basil', to: 'Aphids', relationType: 'repels' },
        { from: 'Compost', to: 'Tomato', relationType: 'feeds' },
      ],
    });
    const read = await server.client.readResource({ uri: URI });
    const [content] = read.contents;
    html = content !== undefined && 'text' in content ? content.text : '';
    expect(html.length).toBeGreaterThan(1000);

    // The host's side of the bridge, bundled for the browser from ext-apps' public API.
    const bundle = await build({
      stdin: {
        contents: `import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'; window.McpHost = { AppBridge, PostMessageTransport };`,
        resolveDir: REPO_ROOT,
      },
      bundle: true,
      format: 'iife',
      platform: 'browser',
      write: false,
      logLevel: 'error',
    });
    const hostBundle = bundle.outputFiles[0]?.text ?? '';

    browser = await launchChromium({ width: 1000, height: 900 });
    page = browser.page;
    // The view may fetch nothing: every request the page or its frames make is recorded.
    page.on('request', (request) => {
      if (!/^(data|about):/.test(request.url())) fetched.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.setContent('<!doctype html><html><head><meta charset="utf-8"><title>host</title></head><body></body></html>');
    await page.addScriptTag({ content: hostBundle });
    await page.addScriptTag({ content: HOST_SCRIPT });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    tmp.cleanup();
  });

  it('hybrid_search: each result with the legs that found it, its factors and the sentence on why it ranked there', async () => {
    const args = { query: 'tomato plants and aphids', explain_query: true };
    // Asked before, and Basil opened twice after it: used (base level), and re-found by this query.
    await call('hybrid_search', args);
    await call('open_nodes', { names: ['Basil'] });
    await call('open_nodes', { names: ['Basil', 'Tomato'] });
    const result = await call('hybrid_search', args);
    const answer = result.structuredContent as unknown as HybridAnswer;
    expect(answer.results.length).toBeGreaterThanOrEqual(3);
    expect(answer.results.some((r) => r.scores.fts_rank !== null && r.scores.semantic_rank !== null)).toBe(true);

    const view = await show('hybrid', 'hybrid_search', args, result);
    await expect.poll(() => view.locator('#results > li').count()).toBe(answer.results.length);
    for (const [i, r] of answer.results.entries()) {
      const s = r.scores;
      const item = view.locator('#results > li').nth(i);
      expect(await item.getAttribute('data-name')).toBe(r.name);
      const legs = [...(s.fts_rank !== null ? ['keyword'] : []), ...(s.semantic_rank !== null ? ['semantic'] : [])];
      expect(await item.locator('[data-leg]').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-leg')))).toEqual(legs);
      const found = [
        ...(s.fts_rank !== null ? [`words (keyword rank ${s.fts_rank})`] : []),
        ...(s.semantic_rank !== null ? [`meaning (semantic rank ${s.semantic_rank})`] : []),
      ];
      const sentence = (await item.locator('.why').textContent()) ?? '';
      expect(sentence.startsWith(`#${i + 1}: found by ${found.length ? found.join(' and ') : 'a filter only'}`)).toBe(true);
      const use =
        s.limbic!.usage_places > 0
          ? /moved up/
          : s.limbic!.usage_places < 0
            ? /moved down/
            : s.limbic!.usage_lift > 0
              ? /used \(\+/
              : /never used/;
      expect(sentence).toMatch(use);
      const factor = async (label: string) =>
        item
          .locator('dl.scores > div', { has: page.locator(`dt:text-is("${label}")`) })
          .locator('dd')
          .textContent();
      expect(await factor('final')).toBe(fmt(s.final));
      expect(await factor('importance')).toBe(fmt(s.limbic!.importance));
      // The usage lift's two parts, each as the answer gives it.
      expect(await factor('base-level lift')).toBe(fmt(s.limbic!.usage_lift_base_level));
      expect(await factor('re-finding lift')).toBe(fmt(s.limbic!.usage_lift_refinding));
      if (s.limbic!.usage_lift_refinding > 0 && s.limbic!.usage_places >= 0)
        expect(sentence).toMatch(/re-finding \+[\d.]+, asked like this before/);
    }
    const basil = answer.results.find((r) => r.name === 'Basil');
    expect(basil?.scores.limbic?.usage_lift_base_level).toBeGreaterThan(0);
    expect(basil?.scores.limbic?.usage_lift_refinding).toBeGreaterThan(0);
    expect(basil?.scores.limbic?.usage_lift).toBeCloseTo(
      (basil?.scores.limbic?.usage_lift_base_level ?? 0) + (basil?.scores.limbic?.usage_lift_refinding ?? 0),
      5,
    );
    // explain_query's stats: how the legs overlapped.
    expect(await view.locator('#stats').textContent()).toContain(`${answer.stats?.fusion_stats.documents_in_both} found by both legs`);
    await page.locator('#hybrid').screenshot({ path: join(ARTIFACTS, 'mcp-app-hybrid-search.png') });
  });

  it('search_semantic: each result with its leg, its factors and its sentence', async () => {
    const args = { query: 'which plant keeps insects off the others' };
    const result = await call('search_semantic', args);
    const answer = result.structuredContent as unknown as SemanticAnswer;
    expect(answer.mode).toBe('hybrid');
    expect(answer.results.length).toBeGreaterThanOrEqual(3);

    const view = await show('semantic', 'search_semantic', args, result);
    await expect.poll(() => view.locator('#results > li').count()).toBe(answer.results.length);
    expect(await view.locator('#status').textContent()).toContain(`for “${args.query}”`);
    for (const [i, r] of answer.results.entries()) {
      const item = view.locator('#results > li').nth(i);
      expect(await item.getAttribute('data-name')).toBe(r.name);
      expect(await item.locator('[data-leg]').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-leg')))).toEqual([
        r.distance === undefined ? 'keyword' : 'semantic',
      ]);
      const found = r.distance === undefined ? 'words (the keyword leg)' : `meaning (distance ${fmt(r.distance)})`;
      expect((await item.locator('.why').textContent()) ?? '').toMatch(
        new RegExp(`^#${i + 1}: found by ${found.replace(/[()]/g, '\\$&')}`),
      );
      const factor = async (label: string) =>
        item
          .locator('dl.scores > div', { has: page.locator(`dt:text-is("${label}")`) })
          .locator('dd')
          .textContent();
      expect(await factor('limbic score')).toBe(fmt(r.limbic_score));
      expect(await factor('importance')).toBe(fmt(r.scoring.importance));
    }
    await page.locator('#semantic').screenshot({ path: join(ARTIFACTS, 'mcp-app-search-semantic.png') });
  });

  it("open_nodes: the entity, its observations and its neighbourhood, every node and edge of the answer's relations", async () => {
    const args = { names: ['Tomato'] };
    const result = await call('open_nodes', args);
    const graph = result.structuredContent as unknown as Graph;
    expect(graph.relations).toHaveLength(3);

    const view = await show('graph', 'open_nodes', args, result);
    expect(await view.locator('section.entity h2').textContent()).toContain('Tomato');
    expect(await view.locator('section.entity .observations li').allTextContents()).toEqual(graph.entities[0]?.observations);
    const nodes = await view
      .locator('#graph svg g.node')
      .evaluateAll((ns) => ns.map((n) => [n.getAttribute('data-name'), n.getAttribute('class')]));
    const ends = new Set(graph.relations.flatMap((r) => [r.from, r.to]));
    expect(nodes.map(([name]) => name).sort()).toEqual([...ends].sort());
    expect(nodes.filter(([, cls]) => cls === 'node opened').map(([name]) => name)).toEqual(['Tomato']);
    const edges = await view
      .locator('#graph svg g.edge')
      .evaluateAll((es) => es.map((e) => `${e.getAttribute('data-from')} ${e.getAttribute('data-type')} ${e.getAttribute('data-to')}`));
    expect(edges.sort()).toEqual(graph.relations.map((r) => `${r.from} ${r.relationType} ${r.to}`).sort());
    // Each edge is drawn with its type as its label, and every relation is also listed as text.
    expect(await view.locator('#graph svg g.edge text').allTextContents()).toEqual(
      expect.arrayContaining(['grows in', 'companion of', 'feeds']),
    );
    expect(await view.locator('#relations li').count()).toBe(3);
    await page.locator('#graph').screenshot({ path: join(ARTIFACTS, 'mcp-app-open-nodes.png') });
  });

  it('fetched nothing and logged no error', () => {
    expect(fetched).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
