/**
 * `npm run bench:fuzz`: bad input at volume (issue 10, part 5). Sends 100,000 seeded random and
 * mutated tool calls (test/helpers/fuzz-calls.ts) through a real MCP client over stdio to the
 * built binary, in chunks: each chunk is a fresh database and server process with its own seed, so
 * a failure replays from that seed alone. Counts answers against the oracle, crashes, protocol
 * errors, and checks every database file afterwards; writes bench/results/fuzz-YYYY-MM-DD.md
 * (fuzz-model-YYYY-MM-DD.md with --model).
 *
 *   npm run bench:fuzz -- [--calls 100000] [--chunks 4] [--seed 1] [--model]
 *
 * --model starts Limbic with its embedding model (the default is --no-model: which answers must
 * succeed does not depend on meaning, and the model would only slow the run).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  checkStoreFile,
  compareGraph,
  runFuzz,
  startStdioLimbic,
  type FuzzReport,
  type StoreCheck,
  type ToolCounts,
} from '../test/helpers/fuzz-calls.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    chunks: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
    model: { type: 'boolean', default: false },
  },
});
const totalCalls = Number(values.calls);
const chunks = Math.max(1, Number(values.chunks));
const firstSeed = Number(values.seed);

interface Chunk {
  readonly seed: number;
  readonly report: FuzzReport;
  readonly graphDiff: string[];
  readonly store: StoreCheck;
  readonly serverLog: string;
}

async function runChunk(seed: number, calls: number): Promise<Chunk> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-fuzz-'));
  const path = join(dir, 'memory.db');
  try {
    const server = await startStdioLimbic(CLI, path, values.model ? [] : ['--no-model']);
    const t0 = performance.now();
    const report = await runFuzz(server.client, {
      seed,
      calls,
      semantic: values.model,
      maxFailures: 200,
      progressEvery: 5_000,
      onProgress: (done, r) =>
        console.log(
          `  seed ${seed}: ${done}/${calls} calls, ${r.isError} isError, ${r.failures.length} failures, ${Math.round((performance.now() - t0) / 1000)} s`,
        ),
    });
    const graphDiff =
      report.crashes === 0 ? await compareGraph(server.client, report.model) : ['not compared: the server stopped answering'];
    const serverLog = server.stderr();
    await server.close();
    return { seed, report, graphDiff, store: checkStoreFile(path), serverLog };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const started = performance.now();
const results: Chunk[] = [];
for (let i = 0; i < chunks; i++) {
  const calls = Math.floor(totalCalls / chunks) + (i < totalCalls % chunks ? 1 : 0);
  console.log(`chunk ${i + 1}/${chunks}: seed ${firstSeed + i}, ${calls} calls`);
  results.push(await runChunk(firstSeed + i, calls));
}
const seconds = (performance.now() - started) / 1000;

const sum = (f: (r: FuzzReport) => number): number => results.reduce((n, c) => n + f(c.report), 0);
const fmt = (n: number): string => n.toLocaleString('en-US');
const byTool = new Map<string, ToolCounts>();
for (const { report } of results) {
  for (const [tool, c] of Object.entries(report.byTool)) {
    const t = byTool.get(tool) ?? { calls: 0, mustSucceed: 0, mustFail: 0, isError: 0, ms: 0, maxMs: 0, overOneSecond: 0 };
    t.calls += c.calls;
    t.mustSucceed += c.mustSucceed;
    t.mustFail += c.mustFail;
    t.isError += c.isError;
    t.ms += c.ms;
    t.maxMs = Math.max(t.maxMs, c.maxMs);
    t.overOneSecond += c.overOneSecond;
    byTool.set(tool, t);
  }
}
const shapes = new Map<string, number>();
for (const { report } of results) for (const [shape, n] of report.messageShapes) shapes.set(shape, (shapes.get(shape) ?? 0) + n);
const codes = new Map<string, number>();
for (const { report } of results)
  for (const [code, n] of Object.entries(report.malformed.codes)) codes.set(code, (codes.get(code) ?? 0) + n);
const failures = results.flatMap((c) => c.report.failures);
const slowest = results.map((c) => ({ ...c.report.slowest, seed: c.seed })).reduce((a, b) => (b.ms > a.ms ? b : a));
const all = <T>(f: (c: Chunk) => T, ok: T): string =>
  results.every((c) => f(c) === ok) ? `${String(ok)} (all ${results.length} files)` : results.map((c) => String(f(c))).join(' / ');

const date = new Date().toISOString().slice(0, 10);
const lines = [
  `# Fuzz: bad input at volume — ${date}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}. ` +
    `Client: @modelcontextprotocol/sdk over stdio to \`node dist/cli/main.js${values.model ? '' : ' --no-model'}\`. ` +
    `${fmt(totalCalls)} calls in ${chunks} chunks (seeds ${firstSeed}–${firstSeed + chunks - 1}), each a fresh database and server process.`,
  `Command: \`npm run bench:fuzz -- --calls ${totalCalls} --chunks ${chunks} --seed ${firstSeed}${values.model ? ' --model' : ''}\`.`,
  '',
  '| measure | value |',
  '|---|---|',
  `| tool calls sent | ${fmt(sum((r) => r.calls))} |`,
  `| valid calls (must succeed) | ${fmt(sum((r) => r.mustSucceed))} |`,
  `| bad calls (must fail naming the field, or a missing entity) | ${fmt(sum((r) => r.mustFail))} |`,
  `| valid calls whose outcome depends on keyword hits (search_semantic without a model) | ${fmt(sum((r) => r.either))} |`,
  `| answers with isError | ${fmt(sum((r) => r.isError))} |`,
  `| answers the oracle disagrees with | ${fmt(failures.length)} |`,
  `| crashes (server stopped answering) | ${fmt(sum((r) => r.crashes))} |`,
  `| protocol errors (JSON-RPC error instead of a tool result) | ${fmt(sum((r) => r.protocolErrors))} |`,
  `| requests whose \`arguments\` is not an object (JSON-RPC error expected) | ${fmt(sum((r) => r.malformed.sent))} sent, ${fmt(sum((r) => r.malformed.answered))} answered (codes ${[...codes].map(([c, n]) => `${c}: ${n}`).join(', ') || 'none'}) |`,
  `| get_statistics counts checked against the model | ${fmt(sum((r) => r.statisticsChecked))} |`,
  `| final graph equals the model | ${all((c) => c.graphDiff.length === 0, true)} |`,
  `| PRAGMA integrity_check | ${all((c) => c.store.integrity, 'ok')} |`,
  `| PRAGMA foreign_key_check violations | ${all((c) => c.store.foreignKeyViolations, 0)} |`,
  `| FTS5 integrity-check (both indexes) | ${all((c) => c.store.fts, 'ok')} |`,
  `| stored text that is not well-formed Unicode | ${all((c) => c.store.illFormedText, 0)} |`,
  `| wall time | ${seconds.toFixed(0)} s (${((seconds * 1000) / totalCalls).toFixed(1)} ms per call) |`,
  `| slowest answer | ${slowest.ms.toFixed(0)} ms: ${slowest.tool} (seed ${slowest.seed}, call ${slowest.index}: ${slowest.how.replace(/\|/g, '/')}) |`,
  '',
  '## By tool',
  '',
  '| tool | calls | must succeed | must fail | isError | mean ms | max ms | answers over 1 s |',
  '|---|---|---|---|---|---|---|---|',
  ...[...byTool].map(
    ([tool, t]) =>
      `| ${tool} | ${fmt(t.calls)} | ${fmt(t.mustSucceed)} | ${fmt(t.mustFail)} | ${fmt(t.isError)} | ${(t.ms / Math.max(1, t.calls)).toFixed(1)} | ${t.maxMs.toFixed(0)} | ${fmt(t.overOneSecond)} |`,
  ),
  '',
  '## Most frequent error messages (numbers and quoted values blanked)',
  '',
  ...[...shapes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([shape, n]) => `- ${fmt(n)} × \`${shape.replace(/\n/g, ' ⏎ ').replace(/`/g, "'")}\``),
  '',
  ...(failures.length === 0
    ? []
    : [
        '## Failures (replay with the seed; the index is the call number in that chunk)',
        '',
        ...failures
          .slice(0, 30)
          .map(
            (f) =>
              `- seed ${f.seed}, call ${f.index}, ${f.tool} (${f.how}): ${f.problem}. Arguments ${f.args.slice(0, 400)}; answer ${JSON.stringify(f.answer.slice(0, 300))}`,
          ),
        '',
      ]),
  ...results
    .filter((c) => c.graphDiff.length > 0)
    .map((c) => `Seed ${c.seed}: graph differs from the model: ${c.graphDiff.slice(0, 5).join('; ')}`),
];
const out = join(ROOT, 'bench', 'results', `fuzz-${values.model ? 'model-' : ''}${date}.md`);
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
console.log(`\nwrote ${out}`);
for (const c of results) if (c.report.crashes > 0) console.log(`server log of seed ${c.seed}:\n${c.serverLog}`);
process.exitCode = failures.length + sum((r) => r.crashes + r.protocolErrors) === 0 ? 0 : 1;
