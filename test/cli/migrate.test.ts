/**
 * `limbic migrate` (issue 35, items 2, 3 and 5): kinds stay in the keyword index of a SQLite target;
 * a page is written whole or not at all, so a migration killed with SIGKILL and run again loses
 * nothing; the copy is checked against the source and a difference fails the command; --namespace
 * and --all-namespaces pick what is copied, and the namespaces' tokens go with them. Then the round
 * trip of a memory using every feature: SQLite → PostgreSQL → SQLite through the built CLI, compared
 * field by field and by the answers of the same searches.
 *
 * Real parts: SQLite files, a throwaway PostgreSQL (test/helpers/pg-server.ts), the built CLI
 * (`npm run build` first) as a subprocess for what a user runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateMemory } from '../../src/cli/migrate.js';
import { namespaceDbPath, namespaceSchema, tokenFilePath } from '../../src/http/namespaces.js';
import { hashToken } from '../../src/http/tokens.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openPgTokenStore } from '../../src/store/postgres/pg-tokens.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import type { Store } from '../../src/store/store.js';
import type { TokenStore } from '../../src/store/token-store.js';
import type { EntityRecord, RelationRecord, TransferStore } from '../../src/store/transfer-store.js';
import {
  buildEveryFeatureMemory,
  EVERY_FEATURE_NAMESPACES,
  readMemorySnapshot,
  searchAnswers,
} from '../helpers/every-feature-memory.js';
import { CLI, keywordExpr, tempDir } from '../helpers/fixtures.js';
import { skipNote, startPgServer, type PgServer } from '../helpers/pg-server.js';

const started = await startPgServer();
const pgServer: PgServer | undefined = 'url' in started ? started : undefined;
afterAll(async () => {
  await pgServer?.stop();
});

const T0 = Date.UTC(2025, 5, 1);

const sqlite = (path: string): Store => openSqliteStore({ path, vectorCacheFile: false });
const pgAt = (url: string, namespace = 'default'): Store => openPgStore({ url, poolSize: 4, schema: namespaceSchema(namespace) });
const transfer = (store: Store): TransferStore => {
  if (store.transfer === undefined) throw new Error('no transfer capability');
  return store.transfer;
};

/** Every entity and relation of a memory, every field but the vector, sorted: for toEqual. */
async function records(store: Store): Promise<{ entities: Omit<EntityRecord, 'vector'>[]; relations: RelationRecord[] }> {
  const entities: Omit<EntityRecord, 'vector'>[] = [];
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer(store).readEntities(cursor, 1_000);
    for (const { vector: _vector, ...rest } of page.records) entities.push(rest);
    cursor = page.next;
  }
  const relations: RelationRecord[] = [];
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer(store).readRelations(cursor, 1_000);
    relations.push(...page.records);
    cursor = page.next;
  }
  const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const key = (r: RelationRecord): string => `${r.from}\u0000${r.to}\u0000${r.relationType}`;
  return { entities: entities.sort(byName), relations: relations.sort((a, b) => (key(a) < key(b) ? -1 : 1)) };
}

/** Alice with a decision (its kind a keyword), older than the copy, with usage. */
async function seedDecision(store: Store): Promise<void> {
  await store.graph.createEntities([{ name: 'Alice', entityType: 'person', observations: ['Works at Acme'] }], T0);
  await store.graph.addObservations([{ entityName: 'Alice', contents: ['Moves the billing to PostgreSQL'], kind: 'decision' }], T0 + 1);
  await store.graph.createEntities([{ name: 'Acme', entityType: 'company', observations: ['Makes anvils'] }], T0 + 2);
  await store.graph.createRelations([{ from: 'Alice', to: 'Acme', relationType: 'works_at', context: 'since 2024' }], T0 + 3);
  const ids = await store.graph.idsByName(['Alice', 'Acme']);
  await store.usage.recordAccess(
    ids.filter((id) => id !== undefined),
    T0 + 4,
  );
}

const keywordHits = async (store: Store, word: string): Promise<string[]> => {
  const hits = (await store.keywords?.search(keywordExpr(word), 10)) ?? [];
  return [...(await store.graph.entitiesById(hits.map((h) => h.id))).values()].map((e) => e.name);
};

describe('limbic migrate into SQLite keeps kinds in the keyword index (issue 35, item 2)', () => {
  it('SQLite → SQLite: "decision" finds Alice on the target as on the source', async () => {
    const tmp = tempDir('limbic-migrate-');
    const from = sqlite(join(tmp.dir, 'from.db'));
    const to = sqlite(join(tmp.dir, 'to.db'));
    try {
      await seedDecision(from);
      expect(await keywordHits(from, 'decision')).toEqual(['Alice']);
      const report = await migrateMemory(from, to);
      expect(report.check.differences).toBe(0);
      expect(await keywordHits(to, 'decision')).toEqual(['Alice']);
      // And for good: another process opening the file (its keyword index built from the file) finds it too.
      await to.close();
      const reopened = sqlite(join(tmp.dir, 'to.db'));
      try {
        expect(await keywordHits(reopened, 'decision')).toEqual(['Alice']);
      } finally {
        await reopened.close();
      }
    } finally {
      await Promise.all([from.close(), to.close().catch(() => undefined)]);
      tmp.cleanup();
    }
  });

  it.runIf(pgServer !== undefined)(`PostgreSQL → SQLite: "decision" finds Alice on the target as on the source${skipNote(started)}`, async () => {
    const tmp = tempDir('limbic-migrate-');
    const url = await (pgServer as PgServer).createDatabase();
    const from = pgAt(url);
    const to = sqlite(join(tmp.dir, 'to.db'));
    try {
      await seedDecision(from);
      expect(await keywordHits(from, 'decision')).toEqual(['Alice']);
      expect((await migrateMemory(from, to)).check.differences).toBe(0);
      expect(await keywordHits(to, 'decision')).toEqual(['Alice']);
    } finally {
      await Promise.all([from.close(), to.close()]);
      await pgServer?.dropDatabase(url);
      tmp.cleanup();
    }
  });
});

describe('a page into SQLite is written whole or not at all (issue 35, item 3)', () => {
  it('a page whose write fails half way (a fake crash: a trigger aborts it) leaves nothing, and the rerun copies it exactly', async () => {
    const tmp = tempDir('limbic-migrate-');
    const from = sqlite(join(tmp.dir, 'from.db'));
    const targetPath = join(tmp.dir, 'to.db');
    try {
      await seedDecision(from);
      // The target fails the page's usage rows, written after its entities and observations.
      const made = sqlite(targetPath);
      await made.close();
      const db = new Database(targetPath);
      db.exec("CREATE TRIGGER fake_crash BEFORE INSERT ON entity_access BEGIN SELECT RAISE(ABORT, 'fake crash'); END;");
      db.close();
      const first = sqlite(targetPath);
      await expect(migrateMemory(from, first)).rejects.toThrow(/fake crash/);
      expect((await first.graph.readGraph()).entities).toEqual([]);
      await first.close();
      new Database(targetPath).exec('DROP TRIGGER fake_crash').close();
      const to = sqlite(targetPath);
      try {
        const again = await migrateMemory(from, to);
        expect(again.check).toMatchObject({ differences: 0, examples: [] });
        expect(await records(to)).toEqual(await records(from));
        expect(await keywordHits(to, 'decision')).toEqual(['Alice']);
      } finally {
        await to.close();
      }
    } finally {
      await from.close();
      tmp.cleanup();
    }
  });

  it('the check names what a target holds otherwise, and the command fails saying so', async () => {
    const tmp = tempDir('limbic-migrate-');
    const fromPath = join(tmp.dir, 'from.db');
    const toPath = join(tmp.dir, 'to.db');
    const from = sqlite(fromPath);
    const to = sqlite(toPath);
    try {
      await seedDecision(from);
      // What the target already held: Alice made later, her decision a plain observation.
      await to.graph.createEntities([{ name: 'Alice', entityType: 'person', observations: ['Moves the billing to PostgreSQL'] }], T0 + 99);
      const report = await migrateMemory(from, to);
      expect(report.check.differences).toBe(1);
      expect(report.check.examples[0]).toMatch(/^entity "Alice" differs: createdAt .*the observation "Moves the billing to PostgreSQL" is generic/);
    } finally {
      await Promise.all([from.close(), to.close()]);
    }
    const run = spawnSync(process.execPath, [CLI, 'migrate', '--from', fromPath, '--to', toPath], { encoding: 'utf8', env: cliEnv(tmp.dir) });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/The copy differs from the source: namespace default: 1 difference, the first: entity "Alice" differs/);
    expect(JSON.parse(run.stdout)).toMatchObject({ check: { differences: 1 } });
    tmp.cleanup();
  });

  it('SIGKILL in the middle of the built CLI copying 20,000 entities, then the same command again: the target equals the source, field by field', async () => {
    const tmp = tempDir('limbic-migrate-kill-');
    const fromPath = join(tmp.dir, 'from.db');
    const toPath = join(tmp.dir, 'to.db');
    const from = sqlite(fromPath);
    try {
      for (let batch = 0; batch < 20; batch++) {
        const names = Array.from({ length: 1_000 }, (_, i) => `Person ${batch * 1_000 + i}`);
        await from.graph.createEntities(
          names.map((name) => ({ name, entityType: 'person', observations: [`${name} works on team ${batch}`] })),
          T0 + batch,
        );
        await from.graph.addObservations(
          names.map((name) => ({ entityName: name, contents: [`${name} chose the blue plan`] })),
          T0 + 100 + batch,
        );
        // Half of them decided something: the kind is a keyword, and a lost kind is generic.
        await from.graph.addObservations(
          names.slice(0, 500).map((name) => ({ entityName: name, contents: [`${name} decided to stay`], kind: 'decision' })),
          T0 + 200 + batch,
        );
      }
      await from.graph.addObservations([{ entityName: 'Person 19999', contents: ['the last word'], kind: 'epilogue' }], T0 + 300);
      await from.graph.createRelations(
        Array.from({ length: 2_000 }, (_, i) => ({ from: `Person ${i}`, to: `Person ${i + 1}`, relationType: 'knows', context: `since ${i}` })),
        T0 + 400,
      );
    } finally {
      await from.close();
    }
    const killed = await runUntil(['migrate', '--from', fromPath, '--to', toPath], tmp.dir, 2_000);
    expect(killed.signal, `the copy ended before it could be killed: ${killed.stderr}`).toBe('SIGKILL');
    const rerun = spawnSync(process.execPath, [CLI, 'migrate', '--from', fromPath, '--to', toPath], { encoding: 'utf8', env: cliEnv(tmp.dir) });
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ entities: 20_000, check: { differences: 0 } });
    const source = sqlite(fromPath);
    const target = sqlite(toPath);
    try {
      const [a, b] = await Promise.all([records(source), records(target)]);
      expect(b.entities.length).toBe(20_000);
      expect(b).toEqual(a);
      expect(await keywordHits(target, 'epilogue')).toEqual(['Person 19999']);
      expect((await target.keywords?.search(keywordExpr('decision'), 20_000))?.length).toBe(10_000);
    } finally {
      await Promise.all([source.close(), target.close()]);
      tmp.cleanup();
    }
  }, 300_000);
});

/** The CLI's environment: nothing of the user's memory, namespace or model. */
function cliEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, LIMBIC_NAMESPACE: '', LIMBIC_DB: '', LIMBIC_NO_MODEL: '1', HOME: home, XDG_DATA_HOME: '', XDG_CONFIG_HOME: '' };
}

/** Runs the CLI and kills it with SIGKILL once its progress shows at least `entities` copied. */
function runUntil(args: string[], home: string, entities: number): Promise<{ signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(home), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const counts = [...stderr.matchAll(/(\d[\d,]*) entities copied/g)].map((m) => Number((m[1] ?? '0').replaceAll(',', '')));
      if ((counts.at(-1) ?? 0) >= entities) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve({ signal, stderr }));
  });
}
