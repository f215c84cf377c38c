/**
 * `npx tsx bench/redaction.ts`: what redaction costs a write (docs/redaction.md). One call of
 * create_entities' use case with 100 entities of 10 observations each (about 110 characters each,
 * realistic notes; `--secrets` plants a GitHub token in one observation of each entity), on a fresh
 * SQLite file, with redaction off and on (secretlint loaded beforehand: its first load, about 70 ms,
 * is paid once per process). Runs alternate; medians are printed. Run it alone:
 *
 *   flock /tmp/limbic-bench.lock npx tsx bench/redaction.ts --runs 11
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { noopLogger } from '../src/core/logger.js';
import { NO_REDACTION, type Redactor } from '../src/core/text/redaction.js';
import type { NewEntity } from '../src/core/types.js';
import { LazyEmbedder } from '../src/embed/embedder.js';
import { MemoryService } from '../src/service/memory-service.js';
import { SecretlintRedactor } from '../src/service/redaction.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const runs = Number(arg('--runs') ?? 11);
const secrets = process.argv.includes('--secrets');

const WORDS =
  'the deploy pipeline runs on fridays after the billing service tests pass and the user prefers dark mode in every editor'.split(' ');
function entities(run: number): NewEntity[] {
  return Array.from({ length: 100 }, (_, e) => ({
    name: `Entity ${run}-${e}`,
    entityType: 'note',
    observations: Array.from({ length: 10 }, (_, o) => {
      const words = Array.from({ length: 20 }, (_, w) => WORDS[(e * 7 + o * 3 + w) % WORDS.length]).join(' ');
      const token = secrets && o === 0 ? ` token ghp_${String(e).padStart(4, '0')}wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0p` : '';
      return `${words} (note ${o} of entity ${e})${token}`;
    }),
  }));
}

async function once(redactor: Redactor, run: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-bench-redact-'));
  const service = new MemoryService({
    store: openSqliteStore({ path: join(dir, 'memory.db') }),
    embedder: new LazyEmbedder(() => Promise.reject(new Error('no model in this bench'))),
    clock: Date.now,
    logger: noopLogger,
    redactor,
  });
  const batch = entities(run);
  const started = performance.now();
  await service.createEntities(batch);
  const ms = performance.now() - started;
  await service.close();
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? (s[(s.length - 1) / 2] ?? 0) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
};

const on = new SecretlintRedactor();
await on.warm();
await once(NO_REDACTION, -1); // warm the SQLite driver and the code paths
await once(on, -2);
const times = { off: [] as number[], on: [] as number[] };
for (let r = 0; r < runs; r++) {
  times.off.push(await once(NO_REDACTION, r));
  times.on.push(await once(on, r));
}
const [off, with_] = [median(times.off), median(times.on)];
console.log(
  `create_entities, 100 entities x 10 observations${secrets ? ' (one GitHub token per entity)' : ''}, ${runs} runs each: ` +
    `redaction off ${off.toFixed(1)} ms, on ${with_.toFixed(1)} ms (median); redaction adds ${(with_ - off).toFixed(1)} ms (${((with_ / off - 1) * 100).toFixed(0)}%)`,
);
