/**
 * Issue 34 item 5: a secret planted through each write path is absent from every byte Limbic
 * stores: every file in the database's folder (the database, its WAL, the `.keywords` and
 * `.vectors` side files) on SQLite, every row of every table on PostgreSQL. The same script with
 * redaction off finds the secrets, so the check can fail.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_REDACTION, type Redactor } from '../../src/core/text/redaction.js';
import { SecretlintRedactor } from '../../src/service/redaction.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { harness, tempDir } from '../helpers/fixtures.js';
import { startPgServer } from '../helpers/pg-server.js';
import { STORED_PATHS, fileLeaks, pgLeaks, secret, writeEverything } from '../helpers/redaction-plant.js';

const pgServer = await startPgServer();
afterAll(async () => {
  if ('url' in pgServer) await pgServer.stop();
});

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
  const files = readdirSync(tmp.dir, { recursive: true, encoding: 'utf8' });
  const leaks = fileLeaks(tmp.dir);
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
    expect([...paths].sort()).toEqual([...STORED_PATHS].sort());
  });
});

const pgUrl = 'url' in pgServer ? pgServer : undefined;
describe.skipIf(pgUrl === undefined)('no redacted secret in any stored byte: PostgreSQL', () => {
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
