/**
 * `npm run bench:hooks` (run it as `flock /tmp/limbic-bench.lock npm run bench:hooks`): how long
 * each lifecycle hook takes from process start to exit, as a client runs it — the built
 * dist/cli/hook.js with the JSON Claude Code sends on stdin — with and without an embedding model
 * installed. Writes bench/results/hook-latency-<date>.md.
 *
 *   --runs 9        runs per case (medians reported, with the fastest and the slowest)
 *   --out FILE      where the report goes
 *
 * Cases, each in a fresh process, in turn (so a busy moment of the machine spreads over all):
 * - `node -e ''`: the floor, Node's own start on this machine at this moment;
 * - `limbic --version`: what starting the whole CLI costs (why the hooks start dist/cli/hook.js);
 * - every event as installed: SessionStart prints the brief of a project whose memory holds captured
 *   sessions and written entities; UserPromptSubmit, Stop, PreCompact and SessionEnd hand their
 *   capture to a background process and exit (what the client waits for);
 * - the same capture events with --foreground: the capture itself (what the background process
 *   does: read the new transcript lines, resolve the project, store through the service).
 * A background capture is waited for (not timed) before the next case starts.
 *
 * "Without a model" points LIMBIC_MODEL_CACHE at an empty folder; "with" at the installed models.
 * A hook never loads the model, so the two should not differ; the bench shows whether they do.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClaudeTranscript } from '../test/helpers/claude-transcript.js';
import { modelCacheDir } from '../test/helpers/fixtures.js';
import { workersDone } from '../test/helpers/hook-process.js';

const ROOT = join(import.meta.dirname, '..');
const HOOK = join(ROOT, 'dist', 'cli', 'hook.js');
const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const RUNS = Number(opt('--runs', '9'));
const DATE = new Date().toISOString().slice(0, 10);
const OUT = opt('--out', join(ROOT, 'bench', 'results', `hook-latency-${DATE}.md`));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Wall time of one process, spawn to exit, with `input` on stdin. */
function timed(command: string, argv: readonly string[], input: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, argv, { env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0 || stderr !== '') reject(new Error(`${argv.join(' ')} → exit ${code}: ${stderr}`));
      else resolve(ms);
    });
    child.stdin.end(input);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'limbic-hook-bench-'));
const repo = join(dir, 'shop');
mkdirSync(repo);
execFileSync('git', ['init', '-q', repo]);
execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'git@github.com:acme/shop.git']);
const db = join(dir, 'memory.db');
const state = join(dir, 'state');
const emptyModels = join(dir, 'no-models');
mkdirSync(emptyModels);
const baseEnv = {
  PATH: process.env.PATH ?? '',
  HOME: join(dir, 'home'),
  XDG_CACHE_HOME: join(dir, 'cache'),
  LIMBIC_DB: '',
  LIMBIC_NAMESPACE: '',
};
const hookArgs = (event: string, ...more: string[]) => [HOOK, '--db', db, event, '--client', 'claude-code', '--state-dir', state, ...more];

/** A memory worth a brief: a few captured sessions of the project (through the hooks themselves). */
async function seed(): Promise<void> {
  for (let s = 0; s < 5; s++) {
    const id = `0000000${s}-8b7d-4e21-9a55-0c1d2e3f4a5b`;
    const t = new ClaudeTranscript(join(dir, 'projects', '-shop', `${id}.jsonl`), id, repo, Date.UTC(2026, 10, 20 + s, 9));
    for (let turn = 0; turn < 20; turn++) {
      t.user(
        turn === 3
          ? `We decided: session ${s} keeps the ${['ledger', 'queue', 'cache', 'search', 'auth'][s]} on PostgreSQL.`
          : `Step ${turn} of task ${s}: look at module ${turn}.`,
        'Todo list is empty.',
      );
      t.assistant(`Done with step ${turn}: module ${turn} reads its settings once.`, [
        { name: 'Bash', input: { command: `npm test -- module${turn}` }, result: `PASS module${turn}.test.ts\n12 tests passed` },
      ]);
    }
    await timed(process.execPath, hookArgs('stop', '--foreground'), t.hookInput('Stop'), baseEnv);
  }
}

interface Case {
  readonly name: string;
  readonly run: (env: NodeJS.ProcessEnv) => Promise<number>;
  /** Whether it left a background capture to wait for. */
  readonly detaches: boolean;
}

async function main(): Promise<void> {
  const load0 = loadavg();
  log(`seeding ${dir}`);
  await seed();
  const live = new ClaudeTranscript(
    join(dir, 'projects', '-shop', 'live-session-0000-4000-8000-000000000000.jsonl'),
    'live-session-0000-4000-8000-000000000000',
    repo,
  );
  let turn = 0;
  const grow = (): void => {
    turn++;
    live.user(`Question ${turn}: where is the retry limit set?`).assistant(`In src/retry.ts, line ${turn}: at most 3 tries.`);
  };
  const event = (
    name: string,
    claude: 'SessionStart' | 'UserPromptSubmit' | 'Stop' | 'PreCompact' | 'SessionEnd',
    foreground: boolean,
  ): Case => ({
    name: `${claude}${foreground ? ' (capture, --foreground)' : ''}`,
    detaches: !foreground && claude !== 'SessionStart',
    run: (env) => {
      if (claude !== 'SessionStart') grow();
      const input = live.hookInput(
        claude,
        claude === 'UserPromptSubmit' ? { prompt: `Question ${turn}: where is the retry limit set?` } : {},
      );
      return timed(process.execPath, hookArgs(name, ...(foreground ? ['--foreground'] : [])), input, env);
    },
  });
  const cases: Case[] = [
    { name: "node -e '' (Node's own start)", detaches: false, run: (env) => timed(process.execPath, ['-e', ''], '', env) },
    {
      name: 'limbic --version (the whole CLI loaded, as `limbic hook` through main.js would)',
      detaches: false,
      run: (env) => timed(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), '--version'], '', env),
    },
    event('session-start', 'SessionStart', false),
    event('prompt', 'UserPromptSubmit', false),
    event('stop', 'Stop', false),
    event('pre-compact', 'PreCompact', false),
    event('session-end', 'SessionEnd', false),
    event('prompt', 'UserPromptSubmit', true),
    // SessionEnd's own capture is Stop's; in the foreground it would meet the hook's 1.2 s deadline (Claude Code allows 1.5 s), which is why it runs in the background.
    event('stop', 'Stop', true),
  ];
  const models = { with: modelCacheDir(), without: emptyModels };
  const installed = readdirSync(models.with).filter((f) => !f.startsWith('.'));
  const results = new Map<string, number[]>();
  for (let r = 0; r < RUNS; r++) {
    for (const [label, cache] of Object.entries(models)) {
      for (const c of cases) {
        const ms = await c.run({ ...baseEnv, LIMBIC_MODEL_CACHE: cache });
        if (c.detaches) await workersDone(state);
        const key = `${c.name}|${label}`;
        results.set(key, [...(results.get(key) ?? []), ms]);
      }
    }
    log(`run ${r + 1}/${RUNS}`);
  }
  const briefChars = (
    await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, hookArgs('session-start'), { env: baseEnv, stdio: ['pipe', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(out));
      child.stdin.end(live.hookInput('SessionStart'));
    })
  ).length;
  const logText = (() => {
    try {
      return readFileSync(join(state, 'hooks.log'), 'utf8');
    } catch {
      return '';
    }
  })();
  const load1 = loadavg();

  const row = (c: Case): string => {
    const cell = (label: string): string => {
      const xs = results.get(`${c.name}|${label}`) ?? [];
      return `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
    };
    return `| ${c.name} | ${cell('without')} | ${cell('with')} |`;
  };
  const floor = median(results.get(`${cases[0]?.name}|without`) ?? []);
  const report = [
    `# Hook latency, ${DATE}`,
    '',
    `\`flock /tmp/limbic-bench.lock npm run bench:hooks -- --runs ${RUNS}\`: wall time of each hook from process start to exit, in ms, median (fastest–slowest) of ${RUNS} runs, the built dist/cli/hook.js with the JSON Claude Code sends on stdin. Memory: 5 captured sessions of 20 turns (and tool calls) in the project of the session; SessionStart's output ${briefChars} characters. "with a model": LIMBIC_MODEL_CACHE holds ${installed.join(', ') || 'nothing'}; "without": an empty folder.`,
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${load0.map((l) => l.toFixed(1)).join(' ')} at the start, ${load1.map((l) => l.toFixed(1)).join(' ')} at the end (other work shares the machine: read each hook against Node's own start in the same runs, ${floor.toFixed(0)} ms).`,
    '',
    '| hook | without a model | with a model |',
    '|---|---|---|',
    ...cases.map(row),
    '',
    logText === '' ? 'The hook log stayed empty: no hook failed.' : `The hook log:\n\n\`\`\`\n${logText}\`\`\``,
    '',
  ].join('\n');
  writeFileSync(OUT, report);
  process.stdout.write(report);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.stack : String(error)}\n`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
