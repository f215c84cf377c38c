/**
 * Secrets planted through every write path of Limbic, and where their bytes are looked for: every
 * file in a database's folder, every row of a PostgreSQL database. Used by the stored-bytes tests
 * (test/mcp/redaction-stored.test.ts) and by `limbic redact --apply`'s (test/cli/redact.test.ts).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { importFile } from '../../src/cli/import-file.js';
import type { Harness } from './fixtures.js';
import { PLANTED, type PlantedSecret } from '../service/redaction-samples.js';

export const secret = (type: string): PlantedSecret => {
  const found = PLANTED.find((p) => p.type === type);
  if (found === undefined) throw new Error(`no planted ${type}`);
  return found;
};

/** Which planted secret goes through which write path (a leak then names its path). */
export const PATHS = {
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
export async function writeEverything(h: Harness, dir: string): Promise<void> {
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
export function leaksIn(bytes: Buffer): string[] {
  const text = bytes.toString('latin1');
  return Object.entries(PATHS)
    .filter(([, p]) => forms(p).some((f) => text.includes(f)))
    .map(([path]) => path);
}

/** Which planted secrets (by path) each file under `dir` holds; files with none are left out. */
export function fileLeaks(dir: string, skip: (file: string) => boolean = (f) => f.endsWith('.jsonl')): Record<string, string[]> {
  const leaks: Record<string, string[]> = {};
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (skip(f)) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, f));
    } catch {
      continue; // a folder
    }
    const found = leaksIn(bytes);
    if (found.length > 0) leaks[f] = found;
  }
  return leaks;
}

/** The paths whose secrets are stored (search queries never are: the shadow log keeps a hash). */
export const STORED_PATHS = Object.keys(PATHS).filter((p) => !['searchQuery', 'hybridQuery', 'nodesQuery'].includes(p));

/** Every row of every table of the database's schemas, as text, and which secrets it holds. */
export async function pgLeaks(url: string): Promise<Record<string, string[]>> {
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
