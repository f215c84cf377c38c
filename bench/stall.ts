/**
 * `npm run bench:stall`: do the tools stay fast while Limbic embeds? (issue 10, "Never stall").
 *
 * What a new user does: a client bulk-loads entities with create_entities, then keeps using the
 * memory while the background indexer embeds them with the installed model. Measured over MCP
 * stdio against the built server, with a second server started with --no-model on an identical
 * store as the peer, in the same run:
 * - bulk load time, with the model (the indexer starts embedding as the first call lands) and without;
 * - each non-semantic tool's latency while the indexer drains, on the peer at the same moments,
 *   and on the peer alone once the model server has stopped (idle);
 * - search_semantic while draining (it waits a bounded time for fresh entities);
 * - the drain rate.
 * Writes bench/results/stall-<date>.md and .json.
 *
 * Options: --bin FILE (a built dist/cli/main.js; default this checkout's), --entities N (5000),
 * --per-call N (500), --samples N per tool and phase (40), --label TEXT.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { rng } from './latency/generate.js';

const ROOT = join(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    bin: { type: 'string', default: join(ROOT, 'dist', 'cli', 'main.js') },
    entities: { type: 'string', default: '5000' },
    'per-call': { type: 'string', default: '500' },
    samples: { type: 'string', default: '40' },
    label: { type: 'string', default: 'this checkout' },
  },
});
const ENTITIES = Number(args.entities);
const PER_CALL = Number(args['per-call']);
const SAMPLES = Number(args.samples);

const WORDS = (
  'memory garden archive budget library river mountain coffee meeting project deadline invoice customer release pipeline ' +
  'database server kettle window teacher student doctor museum painting train station airport harbour recipe bread ' +
  'festival summer winter autumn spring holiday family friend neighbour village city country language music guitar piano ' +
  'novel poem history science physics chemistry biology football tennis marathon bicycle engine battery solar wind ' +
  'contract lawyer court policy election vote market price salary office remote team manager review feedback plan'
).split(' ');

const random = rng(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
const sentence = (): string => Array.from({ length: 10 + Math.floor(random() * 21) }, () => pick(WORDS)).join(' ');
const entities = Array.from({ length: ENTITIES }, (_, i) => ({
  name: `entity-${i}-${pick(WORDS)}`,
  entityType: pick(['person', 'project', 'place', 'note']),
  observations: Array.from({ length: 5 }, sentence),
}));

interface Server {
  readonly client: Client;
  readonly label: string;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

async function start(label: string, db: string, extra: string[]): Promise<Server> {
  const client = new Client({ name: 'bench-stall', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [args.bin, '--db', db, ...extra],
      env: process.env as Record<string, string>,
      stderr: 'ignore',
    }),
  );
  return {
    client,
    label,
    async call(name, toolArgs) {
      const result = await client.callTool({ name, arguments: toolArgs }, undefined, { timeout: 600_000 });
      if (result.isError) throw new Error(`${label} ${name}: ${JSON.stringify(result.content)}`);
      return (result.structuredContent ?? {}) as Record<string, unknown>;
    },
  };
}

async function pending(s: Server): Promise<number> {
  const stats = await s.call('get_statistics', {});
  return (stats.embeddings as { pending: number }).pending;
}

const quantile = (xs: readonly number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
};

let made = 0;
/** The tool calls timed, each a few shapes: a name, a common word, a rare word; one and five names. */
const TOOLS: Record<string, (i: number) => [string, Record<string, unknown>]> = {
  search_nodes: (i) => [
    'search_nodes',
    { query: [`entity-${(i * 37) % ENTITIES}-`, pick(WORDS), `${pick(WORDS)} ${pick(WORDS)}`][i % 3] ?? '' },
  ],
  // The same shapes a page at a time: a common word matches ~70% of the entities, a 3 MB answer
  // that no server returns in 50 ms; a client that pages gets what it reads.
  'search_nodes (limit 50)': (i) => [
    'search_nodes',
    { query: [`entity-${(i * 37) % ENTITIES}-`, pick(WORDS), `${pick(WORDS)} ${pick(WORDS)}`][i % 3] ?? '', limit: 50 },
  ],
  open_nodes: (i) => [
    'open_nodes',
    { names: Array.from({ length: 1 + (i % 5) }, (_, k) => entities[(i * 13 + k * 101) % ENTITIES]?.name ?? '') },
  ],
  create_entities: () => ['create_entities', { entities: [{ name: `late-${made++}`, entityType: 'note', observations: [sentence()] }] }],
  add_observations: (i) => [
    'add_observations',
    { observations: [{ entityName: `late-${i % Math.max(made, 1)}`, contents: [`${sentence()} ${i}`] }] },
  ],
};

type Timings = Record<string, { a: number[]; b: number[] }>;

/** Alternates each tool on the two servers; stops early when `until` says so (checked per round). */
async function sample(a: Server, b: Server, rounds: number, until?: () => Promise<boolean>): Promise<{ timings: Timings; rounds: number }> {
  const timings: Timings = Object.fromEntries(Object.keys(TOOLS).map((t) => [t, { a: [], b: [] }]));
  let done = 0;
  for (; done < rounds; done++) {
    if (until !== undefined && done % 5 === 0 && (await until())) break;
    for (const [tool, make] of Object.entries(TOOLS)) {
      const [name, toolArgs] = make(done);
      for (const [server, into] of [
        [a, timings[tool]?.a],
        [b, timings[tool]?.b],
      ] as const) {
        const t0 = performance.now();
        await server.call(name, toolArgs);
        into?.push(performance.now() - t0);
      }
    }
  }
  return { timings, rounds: done };
}

async function load(s: Server): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < entities.length; i += PER_CALL) await s.call('create_entities', { entities: entities.slice(i, i + PER_CALL) });
  return performance.now() - t0;
}

const dir = mkdtempSync(join(tmpdir(), 'limbic-stall-'));
try {
  console.log(`bench:stall (${args.label}): ${ENTITIES} entities, ${PER_CALL} per call, ${SAMPLES} samples per tool and phase`);
  const peer = await start('no model', join(dir, 'peer.db'), ['--no-model']);
  const withModel = await start('model', join(dir, 'model.db'), []);
  const loadPeer = await load(peer);
  const loadModel = await load(withModel);
  console.log(`bulk load: with the model ${(loadModel / 1000).toFixed(2)} s, without ${(loadPeer / 1000).toFixed(2)} s`);

  const drainStart = { at: performance.now(), pending: await pending(withModel) };
  const busy = await sample(withModel, peer, SAMPLES, async () => (await pending(withModel)) === 0);
  const semantic: number[] = [];
  for (let i = 0; i < 10 && (await pending(withModel)) > 0; i++) {
    const t0 = performance.now();
    await withModel.call('search_semantic', { query: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`, limit: 10 });
    semantic.push(performance.now() - t0);
  }
  const busyEnd = { at: performance.now(), pending: await pending(withModel) };
  const busySeconds = (busyEnd.at - drainStart.at) / 1000;
  // Entities the sampling itself added (create_entities) are in the queue too: count what left it.
  const embedded = drainStart.pending + made - busyEnd.pending;
  console.log(`busy phase: ${busy.rounds} rounds in ${busySeconds.toFixed(1)} s, pending ${drainStart.pending} -> ${busyEnd.pending}`);
  // Idle: the model server stops (a closing server leaves its queue for the next start), and the
  // peer - the same store, no model - answers on a quiet machine. The model server cannot be
  // sampled idle without waiting out its whole drain (minutes at these sizes).
  await withModel.client.close();
  const idle = await sample(peer, peer, SAMPLES);

  const rows = Object.keys(TOOLS).map((tool) => {
    const b = busy.timings[tool];
    const i = idle.timings[tool];
    const idleAll = [...(i?.a ?? []), ...(i?.b ?? [])];
    const r = {
      tool,
      busy_p50: quantile(b?.a ?? [], 0.5),
      busy_p99: quantile(b?.a ?? [], 0.99),
      idle_p50: quantile(idleAll, 0.5),
      idle_p99: quantile(idleAll, 0.99),
      peer_busy_p50: quantile(b?.b ?? [], 0.5),
    };
    return { ...r, ratio: r.busy_p50 / r.idle_p50 };
  });
  const result = {
    label: args.label,
    bin: args.bin,
    date: new Date().toISOString(),
    machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
    entities: ENTITIES,
    perCall: PER_CALL,
    load: { withModelMs: loadModel, withoutMs: loadPeer, ratio: loadModel / loadPeer },
    busyRounds: busy.rounds,
    drain: { pendingAtStart: drainStart.pending, embedded, seconds: busySeconds, entitiesPerSecond: embedded / busySeconds },
    searchSemanticWhileDraining:
      semantic.length === 0 ? null : { p50: quantile(semantic, 0.5), max: Math.max(...semantic), n: semantic.length },
    tools: rows,
  };
  const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const table = [
    '| tool | while embedding p50 / p99 ms | idle p50 / p99 ms | ratio p50 | peer (--no-model) p50 at the same moments |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.tool} | ${f(r.busy_p50)} / ${f(r.busy_p99)} | ${f(r.idle_p50)} / ${f(r.idle_p99)} | ${r.ratio.toFixed(2)}x | ${f(r.peer_busy_p50)} |`,
    ),
  ].join('\n');
  const md = [
    `# bench:stall — ${result.date.slice(0, 10)} (${args.label})`,
    '',
    `${result.machine}. ${ENTITIES} entities of 5 observations (10-30 words each) loaded with create_entities, ${PER_CALL} per call, over MCP stdio.`,
    '',
    `- bulk load: with the model ${f(loadModel / 1000)} s, without ${f(loadPeer / 1000)} s (${result.load.ratio.toFixed(2)}x)`,
    `- while sampling: ${embedded} entities embedded in ${busySeconds.toFixed(1)} s (${result.drain.entitiesPerSecond.toFixed(1)} entities/s), ${busy.rounds} rounds of every tool, pending ${drainStart.pending} -> ${busyEnd.pending}`,
    '- idle: the same calls on the peer (the same store, no model) after the model server stopped, on a quiet machine',
    semantic.length === 0
      ? '- search_semantic while embedding: not sampled (the queue emptied first)'
      : `- search_semantic while embedding: p50 ${f(quantile(semantic, 0.5))} ms, max ${f(Math.max(...semantic))} ms over ${semantic.length} calls`,
    '',
    table,
    '',
  ].join('\n');
  console.log(md);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const stem = join(ROOT, 'bench', 'results', `stall-${result.date.slice(0, 10)}-${args.label.replace(/[^a-z0-9]+/gi, '-')}`);
  writeFileSync(`${stem}.md`, md);
  writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
  await peer.client.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
