/**
 * What a tool answers around redaction (docs/redaction.md): with nothing to redact, exactly the
 * answer Limbic gives with redaction off (so the official tools keep the official shape, as
 * test/mcp/differential.test.ts checks against the official server); with something redacted, the
 * same first item and structuredContent plus a second item and `_meta` naming types and counts.
 * Names redact the same everywhere, so references meet; deletions also match the text as given.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_REDACTION } from '../../src/core/text/redaction.js';
import { REDACTIONS_META } from '../../src/mcp/answers.js';
import { SecretlintRedactor } from '../../src/service/redaction.js';
import { harness, tempDir, type Harness } from '../helpers/fixtures.js';
import { PLANTED } from '../service/redaction-samples.js';

const token = PLANTED.find((p) => p.type === 'github-token')?.secret ?? '';
const open: Harness[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});
async function make(on: boolean, path?: string): Promise<Harness> {
  const h = await harness({ redactor: on ? new SecretlintRedactor() : NO_REDACTION, ...(path === undefined ? {} : { path }) });
  open.push(h);
  return h;
}

/** The official tools' script, with text that holds nothing to redact. */
const CLEAN: [string, Record<string, unknown>][] = [
  [
    'create_entities',
    {
      entities: [
        { name: 'Alice', entityType: 'person', observations: ['Speaks Spanish', 'password reset by e-mail'] },
        { name: 'Acme', entityType: 'company', observations: [] },
      ],
    },
  ],
  ['create_relations', { relations: [{ from: 'Alice', to: 'Acme', relationType: 'works_at' }] }],
  ['add_observations', { observations: [{ entityName: 'Alice', contents: ['commit 3f2a9c1e4b5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f'] }] }],
  ['read_graph', {}],
  ['search_nodes', { query: 'spanish' }],
  ['open_nodes', { names: ['Alice'] }],
  ['delete_observations', { deletions: [{ entityName: 'Alice', observations: ['Speaks Spanish'] }] }],
  ['delete_relations', { relations: [{ from: 'Alice', to: 'Acme', relationType: 'works_at' }] }],
  ['delete_entities', { entityNames: ['Acme'] }],
];

describe('answers around redaction', () => {
  it('are the same with redaction on and off when there is nothing to redact', async () => {
    const [on, off] = [await make(true), await make(false)];
    for (const [tool, args] of CLEAN) expect(await on.call(tool, args)).toEqual(await off.call(tool, args));
  });

  it('add a second item and _meta with types and counts, never the value, when something was redacted', async () => {
    const h = await make(true);
    const result = await h.call('create_entities', {
      entities: [{ name: 'CI', entityType: 'service', observations: [`token ${token}`, 'DB_PASSWORD=hunter2hunter2'] }],
    });
    expect(result.content).toHaveLength(2);
    const [first, second] = result.content;
    expect(first?.type === 'text' && JSON.parse(first.text)).toEqual([
      { name: 'CI', entityType: 'service', observations: ['token [REDACTED:github-token]', 'DB_PASSWORD=[REDACTED:password]'] },
    ]);
    expect(second).toEqual({ type: 'text', text: 'Redacted before storing: 1 github-token, 1 password (each stored as [REDACTED:type]).' });
    expect(result.structuredContent).toEqual({
      entities: [{ name: 'CI', entityType: 'service', observations: ['token [REDACTED:github-token]', 'DB_PASSWORD=[REDACTED:password]'] }],
    });
    expect(result._meta?.[REDACTIONS_META]).toEqual([
      { type: 'github-token', count: 1 },
      { type: 'password', count: 1 },
    ]);
    expect(JSON.stringify(result)).not.toContain(token);
  });

  it('redacts a name the same wherever it appears, so relations and opens meet it', async () => {
    const h = await make(true);
    const name = `key ${token}`;
    await h.ok('create_entities', {
      entities: [
        { name, entityType: 'credential', observations: [] },
        { name: 'CI', entityType: 'service', observations: [] },
      ],
    });
    const related = await h.ok<{ relations: unknown[] }>('create_relations', {
      relations: [{ from: 'CI', to: name, relationType: 'uses' }],
    });
    expect(related.relations).toEqual([{ from: 'CI', to: 'key [REDACTED:github-token]', relationType: 'uses' }]);
    const opened = await h.ok<{ entities: { name: string }[]; relations: unknown[] }>('open_nodes', { names: [name] });
    expect(opened.entities.map((e) => e.name)).toEqual(['key [REDACTED:github-token]']);
    expect(opened.relations).toHaveLength(1);
    await h.ok('add_observations', { observations: [{ entityName: name, contents: ['rotated monthly'] }] });
    await h.ok('delete_entities', { entityNames: [name] });
    expect((await h.ok<{ entities: unknown[] }>('open_nodes', { names: [name] })).entities).toEqual([]);
  });

  it('deletes by the text as given what a memory stored before redaction', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'memory.db');
    const before = await make(false, path);
    await before.ok('create_entities', { entities: [{ name: 'CI', entityType: 'service', observations: [`token ${token}`, 'kept'] }] });
    await open.pop()?.close();
    const after = await make(true, path);
    await after.ok('delete_observations', { deletions: [{ entityName: 'CI', observations: [`token ${token}`] }] });
    expect(await after.ok('open_nodes', { names: ['CI'] })).toEqual({
      entities: [{ name: 'CI', entityType: 'service', observations: ['kept'] }],
      relations: [],
    });
    tmp.cleanup();
  });
});
