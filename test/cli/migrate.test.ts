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
import { buildEveryFeatureMemory, EVERY_FEATURE_NAMESPACES, readMemorySnapshot, searchAnswers } from '../helpers/every-feature-memory.js';
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

  it.runIf(pgServer !== undefined)(
    `PostgreSQL → SQLite: "decision" finds Alice on the target as on the source${skipNote(started)}`,
    async () => {
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
    },
  );
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
      expect(report.check.examples[0]).toMatch(
        /^entity "Alice" differs: createdAt .*the observation "Moves the billing to PostgreSQL" is generic/,
      );
    } finally {
      await Promise.all([from.close(), to.close()]);
    }
    const run = spawnSync(process.execPath, [CLI, 'migrate', '--from', fromPath, '--to', toPath], {
      encoding: 'utf8',
      env: cliEnv(tmp.dir),
    });
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
        Array.from({ length: 2_000 }, (_, i) => ({
          from: `Person ${i}`,
          to: `Person ${i + 1}`,
          relationType: 'knows',
          context: `since ${i}`,
        })),
        T0 + 400,
      );
    } finally {
      await from.close();
    }
    const killed = await runUntil(['migrate', '--from', fromPath, '--to', toPath], tmp.dir, 2_000);
    expect(killed.signal, `the copy ended before it could be killed: ${killed.stderr}`).toBe('SIGKILL');
    const rerun = spawnSync(process.execPath, [CLI, 'migrate', '--from', fromPath, '--to', toPath], {
      encoding: 'utf8',
      env: cliEnv(tmp.dir),
    });
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

/** Runs the built CLI with these arguments; its status, stdout and stderr. */
function limbic(home: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: cliEnv(home) });
}

/** A token made by the CLI for a namespace of the memory at `db`. */
function makeToken(home: string, db: string, namespace: string): string {
  const made = limbic(home, '--db', db, 'token', 'create', '--namespace', namespace);
  expect(made.status, made.stderr).toBe(0);
  return made.stdout.trim();
}

const TARGETS = [
  { backend: 'SQLite', available: true },
  { backend: 'PostgreSQL', available: pgServer !== undefined },
] as const;

for (const { backend, available } of TARGETS) {
  describe.runIf(available)(
    `limbic migrate per namespace, with its tokens, into ${backend} (issue 35, item 5)${backend === 'PostgreSQL' ? skipNote(started) : ''}`,
    () => {
      it('--namespace copies that namespace only and its tokens; an absent one fails; --all-namespaces copies them all', async () => {
        const tmp = tempDir('limbic-migrate-ns-');
        const fromPath = join(tmp.dir, 'from.db');
        const to = backend === 'SQLite' ? join(tmp.dir, 'to.db') : await (pgServer as PgServer).createDatabase();
        const open = (namespace: string): Store => (backend === 'SQLite' ? sqlite(namespaceDbPath(to, namespace)) : pgAt(to, namespace));
        const tokensOf = (): TokenStore => (backend === 'SQLite' ? openSqliteTokenStore(tokenFilePath(to)) : openPgTokenStore(to));
        try {
          for (const [namespace, name] of [
            ['default', 'Ada'],
            ['work', 'Bob'],
          ] as const) {
            const store = sqlite(namespaceDbPath(fromPath, namespace));
            await store.graph.createEntities([{ name, entityType: 'person', observations: [`${name} is in ${namespace}`] }], T0);
            await store.close();
          }
          const workToken = makeToken(tmp.dir, fromPath, 'work');
          const defaultToken = makeToken(tmp.dir, fromPath, 'default');

          const work = limbic(tmp.dir, '--namespace', 'work', 'migrate', '--from', fromPath, '--to', to);
          expect(work.status, work.stderr).toBe(0);
          expect(JSON.parse(work.stdout)).toMatchObject({
            namespace: 'work',
            entities: 1,
            entitiesAdded: 1,
            tokensAdded: 1,
            check: { differences: 0 },
          });
          const workStore = open('work');
          const defaultStore = open('default');
          try {
            expect((await workStore.graph.readGraph()).entities.map((e) => e.name)).toEqual(['Bob']);
            expect((await defaultStore.graph.readGraph()).entities).toEqual([]);
          } finally {
            await Promise.all([workStore.close(), defaultStore.close()]);
          }
          let tokens = tokensOf();
          try {
            // The same token opens the same namespace at the target; the default's stayed behind.
            expect(await tokens.byHash(hashToken(workToken))).toMatchObject({ namespace: 'work' });
            expect(await tokens.byHash(hashToken(defaultToken))).toBeUndefined();
          } finally {
            await tokens.close();
          }

          const absent = limbic(tmp.dir, '--namespace', 'nope', 'migrate', '--from', fromPath, '--to', to);
          expect(absent.status).toBe(1);
          expect(absent.stderr).toContain('There is no namespace "nope" at');
          expect(absent.stderr).toContain('Its namespaces: default, work');

          const all = limbic(tmp.dir, 'migrate', '--all-namespaces', '--from', fromPath, '--to', to);
          expect(all.status, all.stderr).toBe(0);
          expect(JSON.parse(all.stdout)).toMatchObject({
            namespaces: { default: { entitiesAdded: 1, check: { differences: 0 } }, work: { entitiesAdded: 0, check: { differences: 0 } } },
            tokensAdded: 1,
          });
          const again = open('default');
          try {
            expect((await again.graph.readGraph()).entities.map((e) => e.name)).toEqual(['Ada']);
          } finally {
            await again.close();
          }
          tokens = tokensOf();
          try {
            expect(await tokens.byHash(hashToken(defaultToken))).toMatchObject({ namespace: 'default' });
            expect(await tokens.count()).toBe(2);
          } finally {
            await tokens.close();
          }
        } finally {
          if (backend === 'PostgreSQL') await pgServer?.dropDatabase(to);
          tmp.cleanup();
        }
      }, 120_000);
    },
  );
}

describe.runIf(pgServer !== undefined)(
  `the every-feature memory through migrate SQLite → PostgreSQL → SQLite (issue 35)${skipNote(started)}`,
  () => {
    it('comes back equal field by field in both namespaces, with its tokens, and answers the same searches the same', async () => {
      const tmp = tempDir('limbic-migrate-round-');
      const fromPath = join(tmp.dir, 'from.db');
      const backPath = join(tmp.dir, 'back.db');
      const directPath = join(tmp.dir, 'direct.db');
      const url = await (pgServer as PgServer).createDatabase();
      try {
        for (const namespace of EVERY_FEATURE_NAMESPACES) {
          const store = sqlite(namespaceDbPath(fromPath, namespace));
          await buildEveryFeatureMemory(store, namespace);
          await store.close();
        }
        const tokens = EVERY_FEATURE_NAMESPACES.map((namespace) => ({ namespace, token: makeToken(tmp.dir, fromPath, namespace) }));
        const there = limbic(tmp.dir, 'migrate', '--all-namespaces', '--from', fromPath, '--to', url);
        expect(there.status, there.stderr).toBe(0);
        expect(JSON.parse(there.stdout)).toMatchObject({ tokensAdded: 2 });
        const back = limbic(tmp.dir, 'migrate', '--all-namespaces', '--from', url, '--to', backPath);
        expect(back.status, back.stderr).toBe(0);
        expect(JSON.parse(back.stdout)).toMatchObject({ tokensAdded: 2 });
        const straight = limbic(tmp.dir, 'migrate', '--all-namespaces', '--from', fromPath, '--to', directPath);
        expect(straight.status, straight.stderr).toBe(0);

        const stores = (namespace: string): Store[] => [
          sqlite(namespaceDbPath(fromPath, namespace)),
          pgAt(url, namespace),
          sqlite(namespaceDbPath(backPath, namespace)),
        ];
        for (const namespace of EVERY_FEATURE_NAMESPACES) {
          const [source, middle, end] = stores(namespace) as [Store, Store, Store];
          const direct = sqlite(namespaceDbPath(directPath, namespace));
          try {
            const original = await readMemorySnapshot(source);
            expect(original.entities.length).toBeGreaterThan(6);
            expect(original.tuning).not.toBeNull();
            expect(await readMemorySnapshot(middle)).toEqual(original);
            expect(await readMemorySnapshot(end)).toEqual(original);
            // Exactly the answers of a copy made straight from SQLite to SQLite (same order, same scores).
            const answers = await searchAnswers(direct);
            expect(answers.every((a) => a.results.length > 0)).toBe(true);
            expect(await searchAnswers(end)).toEqual(answers);
            // The source and PostgreSQL find the same entities; their keyword scores (so their order) can
            // differ. SQLite's FTS5 (contentless_delete) keeps counting the rows an entity's keyword rows
            // replaced in BM25's row total, so a memory whose entities were rewritten (as every write
            // does) scores otherwise than the same memory written once, which a copy is; and PostgreSQL's
            // BM25 is not yet SQLite's to the last digit (issue 35, item 8). Neither is migrate's.
            const found = (list: Awaited<ReturnType<typeof searchAnswers>>) =>
              list.map((a) => [a.label, a.results.map((r) => r.name).sort()]);
            expect(found(await searchAnswers(source))).toEqual(found(answers));
            expect(found(await searchAnswers(middle))).toEqual(found(answers));
            // The kinds are keywords on every copy (item 2).
            expect(await keywordHits(end, 'decision')).toEqual(await keywordHits(source, 'decision'));
          } finally {
            await Promise.all([source.close(), middle.close(), end.close(), direct.close()]);
          }
        }
        for (const store of [openPgTokenStore(url), openSqliteTokenStore(tokenFilePath(backPath))]) {
          try {
            for (const { namespace, token } of tokens) expect(await store.byHash(hashToken(token))).toMatchObject({ namespace });
          } finally {
            await store.close();
          }
        }
      } finally {
        await pgServer?.dropDatabase(url);
        tmp.cleanup();
      }
    }, 180_000);
  },
);
