/**
 * Issue 10 ("Faults"): a Limbic process killed with SIGKILL at any moment leaves a database that
 * passes integrity_check, holds every acknowledged write, and finishes its work on the next run.
 * The built binary is killed at random points: during `limbic import` and its closing compaction,
 * inside a stream of create_entities calls, and while the embedding indexer writes vectors with the
 * real model. Kill points come from seeds printed at the start; LIMBIC_KILL_SEED=<n> replays them.
 * Each case notes the phase its kills landed in, from what the file holds afterwards, and asserts
 * that every phase it aims at was hit at least once.
 *
 * Each kill is a test of its own, waiting on the database's changes rather than polling it (issue
 * 33: six kills in one 60-second test, each looking at the file every 10 ms, timed out on a loaded
 * 2-core machine).
 */
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entity } from '../../src/core/types.js';
import type { Statistics } from '../../src/service/memory-service.js';
import { tempDir } from '../helpers/fixtures.js';
import {
  databaseState,
  rng,
  runLimbic,
  sentence,
  sigkill,
  startServer,
  waitForChange,
  writeMemoryFile,
  type DatabaseState,
  type McpServer,
} from './fault-harness.js';

const BASE_SEED = Number(process.env.LIMBIC_KILL_SEED ?? randomInt(1, 1_000_000));
const SEEDS = [BASE_SEED, BASE_SEED + 1, BASE_SEED + 2];
console.log(`kill tests: seeds ${SEEDS.join(', ')} (replay with LIMBIC_KILL_SEED=${BASE_SEED})`);

/** Large enough that the import's compaction takes several steps, small enough for CI. */
const IMPORT_ENTITIES = 6_000;
/** Short entities for the embedding case: a few seconds of work for the real model. */
const EMBED_ENTITIES = 240;
/**
 * One kill case: at most two waits of 60 s (for the kill point, then for the work to finish) and
 * three child processes. Measured at a load of 20 on 2 cores: 23-47 s per import case, 36-37 s per
 * embedding case (each started node process alone takes 2-3 s there).
 */
const CASE_TIMEOUT_MS = 150_000;

type Tally = Map<string, number>;
const count = (tally: Tally, phase: string): void => void tally.set(phase, (tally.get(phase) ?? 0) + 1);

describe.sequential('SIGKILL at random points (issue 10)', () => {
  const tmp = tempDir('limbic-kill-');
  const file = join(tmp.dir, 'memory.jsonl');
  const graph = writeMemoryFile(file, IMPORT_ENTITIES, 11);
  let reference = '';

  const exportOf = async (db: string): Promise<string> => {
    // The official shape: what an import stores, without the times it was stored at.
    const run = runLimbic(['--db', db, '--no-model', 'export', '--official']);
    expect(await run.exited, run.stderr()).toBe(0);
    return run.stdout();
  };

  beforeAll(async () => {
    // The graph as an import that was never killed leaves it.
    const db = join(tmp.dir, 'reference.db');
    const run = runLimbic(['--db', db, '--no-model', 'import', file]);
    expect(await run.exited, run.stderr()).toBe(0);
    reference = await exportOf(db);
    expect(reference.split('\n').length).toBe(graph.entities + graph.relations);
  });

  afterAll(() => tmp.cleanup());

  const importPhases: Tally = new Map();
  for (const seed of SEEDS) {
    for (const target of ['import', 'compaction'] as const) {
      it(
        `limbic import killed while ${target === 'import' ? 'importing' : 'compacting'} (seed ${seed}): the file is sound and a re-run completes the graph`,
        async () => {
          const random = rng(seed * 8 + (target === 'import' ? 1 : 2));
          const db = join(tmp.dir, `import-${seed}-${target}.db`);
          const run = runLimbic(['--db', db, '--no-model', 'import', file]);
          const running = (): boolean => run.child.exitCode === null;
          const look = (): DatabaseState | undefined => {
            try {
              return existsSync(db) ? databaseState(db, { integrity: false }) : undefined;
            } catch {
              return undefined; // the file is being created
            }
          };
          if (target === 'import') {
            const at = Math.floor((0.05 + 0.85 * random()) * graph.entities);
            await waitForChange(tmp.dir, () => (!running() || (look()?.entities ?? 0) >= at ? true : undefined), 60_000);
          } else {
            // Every line is in once the last relation is: the compaction has begun. Then wait for
            // 0-2 of its steps to commit (each changes what is left to merge).
            const begun = await waitForChange(
              tmp.dir,
              () => {
                if (!running()) return null;
                const state = look();
                return state?.relations === graph.relations ? state : undefined;
              },
              60_000,
            );
            const steps = Math.floor(random() * 3);
            let seen = begun?.pagesToMerge ?? 0;
            let committed = 0;
            await waitForChange(
              tmp.dir,
              () => {
                const pages = look()?.pagesToMerge;
                if (!running() || pages === 0) return true;
                if (pages !== undefined && pages !== seen) {
                  seen = pages;
                  committed++;
                }
                return committed >= steps ? true : undefined;
              },
              60_000,
            );
          }
          await sleep(random() * 80); // anywhere in a step or a pause
          await sigkill(run.child);

          const state = databaseState(db);
          const phase = phaseOfImport(state, graph);
          count(importPhases, phase);
          console.log(
            `seed ${seed}, aimed at ${target}: killed during ${phase} (${state?.entities ?? 0}/${graph.entities} entities, ` +
              `${state?.relations ?? 0}/${graph.relations} relations, ${state?.pagesToMerge ?? 0} index pages left to merge)`,
          );
          expect(state?.integrity ?? 'ok').toBe('ok');

          const again = runLimbic(['--db', db, '--no-model', 'import', file]);
          expect(await again.exited, again.stderr()).toBe(0);
          expect(JSON.parse(again.stdout())).toMatchObject({ compacted: true, skipped: 0 });
          expect(await exportOf(db)).toBe(reference);
          expect(databaseState(db)).toMatchObject({ integrity: 'ok', pagesToMerge: 0, segments: 2 });
        },
        CASE_TIMEOUT_MS,
      );
    }
  }

  it('the import kills landed while importing and while compacting', () => {
    console.log(`import kills by phase: ${JSON.stringify(Object.fromEntries(importPhases))}`);
    expect([...importPhases.keys()]).toEqual(expect.arrayContaining(['import', 'compaction']));
  });

  it('a server killed among create_entities calls keeps every acknowledged write, and each call whole or not at all', async () => {
    let inFlight = 0;
    let committedUnanswered = 0;
    for (const seed of SEEDS) {
      const random = rng(seed * 8 + 3);
      const db = join(tmp.dir, `stream-${seed}.db`);
      const server = await startServer(db, { model: false });
      const killAfter = 5 + Math.floor(random() * 60);
      const calls: { entities: Entity[]; acknowledged: boolean }[] = [];
      let killed = false;
      let kill: Promise<void> | undefined;
      // Four calls in flight at once, as a busy client sends them.
      const lane = async (): Promise<void> => {
        while (!killed) {
          const n = calls.length;
          const call = {
            entities: Array.from({ length: 3 }, (_, j) => ({
              name: `call ${n} entity ${j}`,
              entityType: 'note',
              observations: [sentence(random, 8), sentence(random, 12)],
            })),
            acknowledged: false,
          };
          calls.push(call);
          let result;
          try {
            result = await server.call('create_entities', { entities: call.entities });
          } catch {
            return; // the connection closed under the call
          }
          if (killed) return; // answered after the kill was sent: counted as unanswered
          expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
          call.acknowledged = true;
          if (calls.filter((c) => c.acknowledged).length === killAfter) {
            kill = (async () => {
              await sleep(random() * 4);
              killed = true;
              await server.kill();
            })();
          }
        }
      };
      await Promise.all([lane(), lane(), lane(), lane()]);
      await kill;

      const state = databaseState(db);
      expect(state?.integrity).toBe('ok');
      const restarted = await startServer(db, { model: false });
      const opened = await restarted.call('open_nodes', { names: calls.flatMap((c) => c.entities.map((e) => e.name)) });
      const found = new Map((opened.structuredContent as { entities: Entity[] }).entities.map((e) => [e.name, e]));
      const unanswered = calls.filter((c) => !c.acknowledged);
      inFlight += unanswered.length;
      for (const call of calls) {
        const present = call.entities.filter((e) => found.has(e.name));
        // One call is one transaction: an acknowledged call is there in full, any other whole or absent.
        expect([call.acknowledged ? 3 : 0, 3]).toContain(present.length);
        for (const e of present) expect(found.get(e.name)?.observations).toEqual(e.observations);
        if (!call.acknowledged && present.length === 3) committedUnanswered++;
      }
      console.log(
        `seed ${seed}: killed after ${killAfter} acknowledged calls with ${unanswered.length} in flight; ` +
          `${unanswered.filter((c) => c.entities.every((e) => found.has(e.name))).length} of those were committed`,
      );
      await restarted.close();
    }
    console.log(`stream kills: ${inFlight} calls in flight at the kills, ${committedUnanswered} committed but unanswered`);
    expect(inFlight).toBeGreaterThan(0); // the kills landed inside the stream, not after it
  });

  const embedPhases: Tally = new Map();
  for (const seed of SEEDS.slice(0, 2)) {
    it(
      `a server killed while embedding (seed ${seed}) resumes the queue on the next start, until every entity has its vector`,
      async () => {
        const random = rng(seed * 8 + 4);
        const db = join(tmp.dir, `embed-${seed}.db`);
        const server = await startServer(db, { model: true });
        for (let start = 0; start < EMBED_ENTITIES; start += 40) {
          const entities = Array.from({ length: 40 }, (_, i) => ({
            name: `Short ${start + i}`,
            entityType: 'note',
            observations: [sentence(random, 6 + Math.floor(random() * 6))],
          }));
          const result = await server.call('create_entities', { entities });
          expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        }
        const threshold = Math.floor((0.1 + 0.6 * random()) * EMBED_ENTITIES);
        // Asked again when the file changes (each batch of vectors is a commit), not every 20 ms:
        // the server answering get_statistics is the one embedding.
        const seen = await waitForChange(
          tmp.dir,
          async () => {
            const s = await statistics(server);
            return s.embeddings.indexed >= threshold || s.embeddings.pending === 0 ? s : undefined;
          },
          60_000,
        );
        await server.kill();

        const killed = vectorState(db);
        const phase = killed.vectors === 0 ? 'before embedding' : killed.vectors < EMBED_ENTITIES ? 'embedding' : 'after embedding';
        count(embedPhases, phase);
        console.log(
          `seed ${seed}: killed at ${seen.embeddings.indexed} embedded (aimed at ${threshold}); the file holds ${killed.vectors} vectors, ${killed.queued} queued: ${phase}`,
        );
        expect(killed).toMatchObject({ integrity: 'ok', entities: EMBED_ENTITIES, uncovered: 0 });

        const restarted = await startServer(db, { model: true });
        const done = await waitForChange(
          tmp.dir,
          async () => {
            const s = await statistics(restarted);
            return s.embeddings.pending === 0 && s.embeddings.indexed === s.entities ? s : undefined;
          },
          60_000,
        );
        expect(done.entities).toBe(EMBED_ENTITIES);
        await restarted.close();
        expect(vectorState(db)).toMatchObject({ integrity: 'ok', vectors: EMBED_ENTITIES, queued: 0, uncovered: 0 });
      },
      CASE_TIMEOUT_MS,
    );
  }

  it('the embedding kills landed while embedding', () => {
    expect([...embedPhases.keys()]).toContain('embedding');
  });
});

/** Where an import's kill landed, read from what the file holds. */
function phaseOfImport(state: DatabaseState | undefined, graph: { entities: number; relations: number }): string {
  if (state === undefined) return 'start';
  if (state.entities < graph.entities || state.relations < graph.relations) return 'import';
  return state.pagesToMerge > 0 ? 'compaction' : 'after';
}

async function statistics(server: McpServer): Promise<Statistics> {
  const result = await server.call('get_statistics');
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as unknown as Statistics;
}

/**
 * Vectors and queue of a killed server's file, on a fresh connection with sqlite-vec loaded.
 * `uncovered`: entities with neither a vector nor a queued job, which no restart would ever embed.
 */
function vectorState(path: string): { integrity: string; entities: number; vectors: number; queued: number; uncovered: number } {
  const db = new Database(path);
  try {
    sqliteVec.load(db);
    const n = (sql: string): number => db.prepare<[], { n: number }>(sql).get()?.n ?? 0;
    // No vector table yet: the model never got as far as binding it.
    const table = n("SELECT count(*) AS n FROM sqlite_master WHERE name = 'entity_embeddings'") > 0;
    return {
      integrity: db.pragma('integrity_check', { simple: true }) as string,
      entities: n('SELECT count(*) AS n FROM entities'),
      vectors: table ? n('SELECT count(*) AS n FROM entity_embeddings') : 0,
      queued: n('SELECT count(*) AS n FROM embedding_queue'),
      uncovered: n(
        `SELECT count(*) AS n FROM entities e
          WHERE NOT EXISTS (SELECT 1 FROM embedding_queue q WHERE q.entity_id = e.id)
            ${table ? 'AND e.id NOT IN (SELECT rowid FROM entity_embeddings)' : ''}`,
      ),
    };
  } finally {
    db.close();
  }
}
