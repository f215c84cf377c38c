/**
 * `npm run bench:embed`: the embedding engine on this machine. Throughput at batch 1 and 32,
 * query-encode latency (median, p95) for a 10-word query, cold start of the built server to its
 * first semantic result over stdio, and peak memory. Writes bench/results/embed-<date>.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadModel } from './quality/harness.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] ?? NaN;

const SENTENCES = [
  'The quarterly budget review meeting moved to Thursday afternoon.',
  'Alice prefers tea over coffee and speaks fluent Spanish.',
  'The deployment pipeline runs integration tests before every release.',
  'Sourdough bread needs a long cold fermentation for the best flavour.',
  'The team decided to use SQLite with FTS5 for the knowledge graph.',
  'Remember to renew the domain name before it expires next month.',
  'Our hiking trip to the mountains was postponed because of the storm.',
  'The customer asked for an export of all invoices from last year.',
];
const text = (i: number): string => `${SENTENCES[i % SENTENCES.length]} (note ${i})`;

async function throughput(batch: number, total: number): Promise<number> {
  const e = await loadModel();
  const texts = Array.from({ length: total }, (_, i) => text(i));
  await e.embed(texts.slice(0, batch), 'passage'); // warm
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += batch) await e.embed(texts.slice(i, i + batch), 'passage');
  return total / ((performance.now() - t0) / 1000);
}

async function queryLatency(runs: number): Promise<{ median: number; p95: number }> {
  const e = await loadModel();
  const query = 'how do I configure the database connection pool size properly';
  for (let i = 0; i < 5; i++) await e.embed([query], 'query');
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await e.embed([query], 'query');
    times.push(performance.now() - t0);
  }
  return { median: median(times), p95: p95(times) };
}

/** Spawn the built server on a prepared database and time it to the first search_semantic answer. */
async function coldStart(runs: number): Promise<{ handshake: number; firstResult: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'limbic-bench-cold-'));
  const db = join(dir, 'memory.db');
  const file = join(dir, 'memory.jsonl');
  writeFileSync(
    file,
    Array.from({ length: 200 }, (_, i) => JSON.stringify({ type: 'entity', name: `Note ${i}`, entityType: 'note', observations: [text(i)] })).join('\n'),
  );
  execFileSync(process.execPath, [CLI, '--db', db, 'import', file], { stdio: 'ignore' });
  execFileSync(process.execPath, [CLI, '--db', db, 'reembed'], { stdio: 'ignore' });
  const handshakes: number[] = [];
  const firsts: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, '--db', db], stderr: 'ignore' }));
    handshakes.push(performance.now() - t0);
    await client.callTool({ name: 'search_semantic', arguments: { query: 'bread baking', limit: 5 } });
    firsts.push(performance.now() - t0);
    await client.close();
  }
  rmSync(dir, { recursive: true, force: true });
  return { handshake: median(handshakes), firstResult: median(firsts) };
}

const rssBefore = process.memoryUsage().rss;
const batch1 = await throughput(1, 200);
const batch32 = await throughput(32, 640);
const latency = await queryLatency(100);
const peakRss = process.resourceUsage().maxRSS * 1024;
const cold = await coldStart(5);

const report = [
  `# Embedding engine — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. Model: all-MiniLM-L6-v2, int8 ONNX, 384 dims.`,
  '',
  '| measure | value |',
  '|---|---|',
  `| throughput, batch 1 (short sentences) | ${batch1.toFixed(0)} texts/s |`,
  `| throughput, batch 32 | ${batch32.toFixed(0)} texts/s |`,
  `| query encode, 10 words, median of 100 | ${latency.median.toFixed(1)} ms |`,
  `| query encode, p95 | ${latency.p95.toFixed(1)} ms |`,
  `| server spawn → MCP handshake (median of 5) | ${cold.handshake.toFixed(0)} ms |`,
  `| server spawn → first search_semantic result (model load included) | ${cold.firstResult.toFixed(0)} ms |`,
  `| peak RSS of this benchmark process (model loaded) | ${(peakRss / 1e6).toFixed(0)} MB (${(rssBefore / 1e6).toFixed(0)} MB before loading) |`,
].join('\n');
console.log(report);
writeFileSync(join(ROOT, 'bench', 'results', `embed-${new Date().toISOString().slice(0, 10)}.md`), `${report}\n`);
