/**
 * Issue 34 item 5: a secret planted through each write path is absent from every byte Limbic
 * stores: every file in the database's folder (the database, its WAL, the `.keywords` and
 * `.vectors` side files) on SQLite, every row of every table on PostgreSQL. The same script with
 * redaction off finds the secrets, so the check can fail.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_REDACTION, type Redactor } from '../../src/core/text/redaction.js';
import { importFile } from '../../src/cli/import-file.js';
import { SecretlintRedactor } from '../../src/service/redaction.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { harness, tempDir, type Harness } from '../helpers/fixtures.js';
import { startPgServer } from '../helpers/pg-server.js';
import { PLANTED, type PlantedSecret } from '../service/redaction-samples.js';

const pgServer = await startPgServer();
afterAll(async () => {
  if ('url' in pgServer) await pgServer.stop();
});

const secret = (type: string): PlantedSecret => {
  const found = PLANTED.find((p) => p.type === type);
  if (found === undefined) throw new Error(`no planted ${type}`);
  return found;
};

/** Which planted secret goes through which write path (a leak then names its path). */
const PATHS = {
  entityName: secret('github-token'),
  entityType: secret('npm-token'),
  observation: secret('aws-access-key'),
  addObservation: secret('stripe-key'),
  supersedeOld: secret('slack-token'), // written before the supersede, then replaced: history keeps it
  supersedeNew: secret('openai-key'),
  relationEnd: secret('gitlab-token'),
  relationContext: secret('anthropic-key'),
  reflection: secret('jwt'),
  reflectionAuthor: secret('google-api-key'),
  splitName: secret('huggingface-token'),
  importObservation: secret('private-key'),
  importName: secret('sendgrid-key'),
  searchQuery: secret('azure-client-secret'),
  hybridQuery: secret('bearer-token'),
  nodesQuery: secret('azure-storage-key'),
} as const;

/** The name an entity gets from a planted text: short, so it stays a name. */
const nameWith = (p: PlantedSecret): string => `service key ${p.secret}`;

/** Every write path of the tools, plus the memory.jsonl import, each with its own secret. */
async function writeEverything(h: Harness, dir: string): Promise<void> {
  await h.ok('create_entities', {
    entities: [
      { name: nameWith(PATHS.entityName), entityType: 'credential', observations: ['the CI token'] },
      { name: 'Deploy', entityType: `type ${PATHS.entityType.secret}`, observations: [PATHS.observation.text, PATHS.supersedeOld.text] },
      {
        name: 'Topics',
        entityType: 'note',
        observations: Array.from({ length: 24 }, (_, i) => (i < 12 ? `billing invoice number ${i}` : `deploy pipeline stage ${i}`)),
      },
    ],
  });
  await h.ok('add_observations', { observations: [{ entityName: 'Deploy', contents: [PATHS.addObservation.text] }] });
  // The replacement holds a secret; the observation it replaces held one when it was written.
  await h.ok('add_observations', {
    observations: [{ entityName: 'Deploy', contents: [PATHS.supersedeNew.text], supersedes: PATHS.supersedeOld.text }],
  });
  await h.ok('create_relations', {
    relations: [
      { from: 'Deploy', to: nameWith(PATHS.entityName), relationType: 'uses' },
      { from: 'Deploy', to: nameWith(PATHS.relationEnd), relationType: 'reads', context: PATHS.relationContext.text },
    ],
  });
  await h.ok('add_reflection', { content: PATHS.reflection.text, about: ['Deploy'], author: PATHS.reflectionAuthor.text });
  await h.ok('execute_entity_split', {
    entity_name: 'Topics',
    approved_splits: [{ name: nameWith(PATHS.splitName), observations: ['billing invoice number 1', 'billing invoice number 2'] }],
  });
  const file = join(dir, 'memory.jsonl');
  writeFileSync(
    file,
    `${JSON.stringify({ type: 'entity', name: nameWith(PATHS.importName), entityType: 'imported', observations: [PATHS.importObservation.text] })}\n`,
  );
  const report = await importFile(h.service, file);
  expect(report.entitiesAdded).toBe(1);
  // Searches log what they showed (the shadow log); the queries hold secrets too.
  await h.ok('search_semantic', { query: `deploy ${PATHS.searchQuery.text}` });
  await h.ok('hybrid_search', { query: `deploy ${PATHS.hybridQuery.text}` });
  await h.ok('search_nodes', { query: PATHS.nodesQuery.secret });
  await h.ok('hybrid_search', { query: 'deploy token key' });
  h.service.warm();
  await h.service.drainEmbeddings();
  await h.settle();
}

/**
 * The forms a secret's bytes can take in storage: as written, lower-cased (FTS5 folds case), and
 * each run of 12+ letters and digits lower-cased (FTS5 stores words as tokens, split at "_", "-",
 * "/"); a run another planted secret shares is left out, so a finding names its path.
 */
function forms(p: PlantedSecret): string[] {
  const others = Object.values(PATHS)
    .filter((o) => o !== p)
    .map((o) => o.secret.toLowerCase());
  const runs = (p.secret.match(/[A-Za-z0-9]{12,}/g) ?? []).map((r) => r.toLowerCase()).filter((r) => !others.some((o) => o.includes(r)));
  return [...new Set([p.secret, p.secret.toLowerCase(), ...runs])];
}

/** Which planted secrets (by path) occur in `bytes`. */
function leaksIn(bytes: Buffer): string[] {
  const text = bytes.toString('latin1');
  return Object.entries(PATHS)
    .filter(([, p]) => forms(p).some((f) => text.includes(f)))
    .map(([path]) => path);
}

async function sqliteRun(redactor: Redactor): Promise<{ leaks: Record<string, string[]>; files: string[]; answer: string }> {
  const tmp = tempDir();
  const h = await harness({ path: join(tmp.dir, 'memory.db'), redactor, embedder: 'fake' });
  let answer = '';
  try {
    await writeEverything(h, tmp.dir);
    const result = await h.call('add_observations', { observations: [{ entityName: 'Deploy', contents: [secret('password').text] }] });
    answer = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  } finally {
    await h.close().catch(() => undefined);
  }
  const files = readdirSync(tmp.dir, { recursive: true, encoding: 'utf8' }).filter((f) => !f.endsWith('memory.jsonl'));
  const leaks: Record<string, string[]> = {};
  for (const f of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(tmp.dir, f));
    } catch {
      continue; // a folder
    }
    const found = leaksIn(bytes);
    if (found.length > 0) leaks[f] = found;
  }
  tmp.cleanup();
  return { leaks, files, answer };
}

describe('no redacted secret in any stored byte: SQLite', () => {
  it('every file in the database folder is free of every planted secret, side files included', async () => {
    const { leaks, files, answer } = await sqliteRun(new SecretlintRedactor());
    expect(files).toEqual(expect.arrayContaining(['memory.db', 'memory.db.keywords', 'memory.db.vectors']));
    expect(leaks).toEqual({});
    expect(answer).toContain('Redacted before storing: 1 password');
    expect(answer).not.toContain(secret('password').secret);
  });

  it('finds the secrets when redaction is off (the check can fail)', async () => {
    const { leaks } = await sqliteRun(NO_REDACTION);
    const paths = new Set(Object.values(leaks).flat());
    // Every path but the search queries, whose text is never stored (the shadow log keeps a hash).
    const stored = Object.keys(PATHS).filter((p) => !['searchQuery', 'hybridQuery', 'nodesQuery'].includes(p));
    expect([...paths].sort()).toEqual(stored.sort());
  });
});

const pgUrl = 'url' in pgServer ? pgServer : undefined;
describe.skipIf(pgUrl === undefined)('no redacted secret in any stored byte: PostgreSQL', () => {
  /** Every row of every table of the database's schemas, as text, and which secrets it holds. */
  async function pgLeaks(url: string): Promise<Record<string, string[]>> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const tables = await client.query<{ s: string; t: string }>(
        "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
      );
      const leaks: Record<string, string[]> = {};
      for (const { s, t } of tables.rows) {
        const rows = await client.query<{ row: string }>(`SELECT x::text AS row FROM "${s}"."${t}" x`);
        const found = leaksIn(Buffer.from(rows.rows.map((r) => r.row).join('\n'), 'latin1'));
        if (found.length > 0) leaks[`${s}.${t}`] = found;
      }
      return leaks;
    } finally {
      await client.end();
    }
  }

  async function pgRun(redactor: Redactor): Promise<Record<string, string[]>> {
    const url = await (pgUrl?.createDatabase() ?? Promise.reject(new Error('no server')));
    const tmp = tempDir();
    const h = await harness({ store: openPgStore({ url, poolSize: 4 }), redactor, embedder: 'fake' });
    try {
      await writeEverything(h, tmp.dir);
    } finally {
      await h.close().catch(() => undefined);
      tmp.cleanup();
    }
    return pgLeaks(url);
  }

  it('every row of every table is free of every planted secret', async () => {
    expect(await pgRun(new SecretlintRedactor())).toEqual({});
  });

  it('finds the secrets when redaction is off (the check can fail)', async () => {
    const leaks = await pgRun(NO_REDACTION);
    expect(Object.keys(leaks).length).toBeGreaterThan(0);
    expect(new Set(Object.values(leaks).flat())).toContain('observation');
  });
});
