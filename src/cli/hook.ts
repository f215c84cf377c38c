/**
 * `limbic hook EVENT`: what the entries `limbic hooks install` writes run (docs/hooks.md), as
 * `node …/dist/cli/hook.js [--db PATH] [--namespace NAME] EVENT --client CLIENT --state-dir DIR`.
 *
 * A hook never blocks or breaks the agent: it always exits 0, saying what went wrong in one line on
 * stderr; it gives up past a deadline; its stdout carries nothing but what the client injects.
 * It starts fast: this module loads no more than the event names and child_process. SessionStart
 * loads the memory to print the brief (hook-runtime.ts); a capture event hands its input to a
 * background copy of itself (`--worker`) and exits at once, so a prompt never waits for a capture
 * and SessionEnd's 1.5 s never cut one short. `--foreground` captures before exiting.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, realpathSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readHookInput, type HookClient, type HookEvent, type HookInput } from '../capture/hook-input.js';
import { parseHookArgs, workerArgs, type HookArgs } from './hook-args.js';

/** The input is at most this large (a prompt with a long paste); past it the hook gives up. */
export const MAX_INPUT_BYTES = 32 * 1024 * 1024;
/** A client that never closes stdin: after this long, whatever arrived is the input. */
export const STDIN_WAIT_MS = 3_000;

/**
 * How long a hook may run before it gives up, exiting 0: below each client's own limit (Claude
 * Code kills SessionEnd hooks after 1.5 s; the others allow 10 s or more), and generous for the
 * background worker, which nobody waits for.
 */
export function deadlineMs(event: HookEvent | undefined, mode: HookArgs['mode']): number {
  if (mode === 'worker') return 120_000;
  if (event === 'session-end') return 1_200;
  if (event === 'session-start') return 8_000;
  return 10_000;
}

/** What a client reads on stdout when a hook has nothing to say: Gemini CLI reads only JSON, Cursor's prompt hook a `continue`. */
export function emptyOutput(declared: HookClient, event: HookEvent | undefined): string {
  if (declared === 'gemini') return '{}';
  if (declared === 'cursor') return event === 'prompt' ? '{"continue":true}' : '{}';
  return '';
}

/** One line on stderr: the client's (it shows it as the hook's error), or for the worker the hook log. */
function say(line: string, worker = false): void {
  process.stderr.write(`${worker ? `${new Date().toISOString()} ` : ''}limbic hook: ${line}\n`);
}

/** stdin until it ends, MAX_INPUT_BYTES, or STDIN_WAIT_MS; nothing from a terminal. */
function readInput(): Promise<string> {
  if (process.stdin.isTTY === true) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const done = (): void => {
      clearTimeout(timer);
      process.stdin.removeAllListeners('data');
      process.stdin.pause();
      // A byte order mark (PowerShell's pipes add one) is not JSON.
      resolve(
        Buffer.concat(chunks)
          .toString('utf8')
          .replace(/^\uFEFF/, ''),
      );
    };
    const timer = setTimeout(done, STDIN_WAIT_MS);
    process.stdin.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_INPUT_BYTES) {
        clearTimeout(timer);
        process.stdin.destroy();
        reject(new Error(`the hook's input is over ${MAX_INPUT_BYTES / 1024 / 1024} MB`));
        return;
      }
      chunks.push(chunk);
    });
    process.stdin.once('end', done);
    process.stdin.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * Starts the background worker with the same command line and hands it the input on its stdin.
 * Its stderr goes to the hook log when the entry names the state folder, so a worker that cannot
 * even start leaves a line there.
 */
function detach(argv: readonly string[], args: HookArgs, raw: string): void {
  let stderr: 'ignore' | number = 'ignore';
  if (args.stateDir !== undefined) {
    try {
      mkdirSync(args.stateDir, { recursive: true, mode: 0o700 });
      stderr = openSync(join(args.stateDir, 'hooks.log'), 'a', 0o600);
    } catch {
      stderr = 'ignore';
    }
  }
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...workerArgs(argv)], {
    detached: true,
    stdio: ['pipe', 'ignore', stderr],
    windowsHide: true,
  });
  child.on('error', (error) => say(`could not start the background capture: ${error.message}`));
  child.stdin?.on('error', () => undefined); // a worker that died at once: its own log line says why
  child.stdin?.end(raw);
  child.unref();
}

/** Resolves 'detached' when a background worker now holds the input (this process must let its stdin write finish). */
async function run(argv: readonly string[], args: HookArgs): Promise<'detached' | 'done'> {
  if (args.ignored.length > 0 && args.mode !== 'worker')
    say(`ignored ${args.ignored.join(' ')} (a newer Limbic's entry? run limbic hooks install again)`);
  const raw = await readInput();
  let json: unknown = {};
  if (raw.trim() !== '') {
    try {
      json = JSON.parse(raw);
    } catch {
      say('the input on stdin is not JSON; nothing done', args.mode === 'worker');
      return 'done';
    }
  }
  const input: HookInput | undefined = readHookInput(json, { event: args.event, client: args.client });
  if (input === undefined) {
    say('no event named on the command line or in hook_event_name; nothing done', args.mode === 'worker');
    return 'done';
  }
  if (input.event === 'session-start') {
    const { runSessionStart } = await import('./hook-runtime.js');
    const out = await runSessionStart(args, input);
    process.stdout.write(out === '' ? emptyOutput(args.client, input.event) : out);
    return 'done';
  }
  process.stdout.write(emptyOutput(args.client, input.event));
  if (args.mode === 'detach') {
    detach(argv, args, raw);
    return 'detached';
  }
  const { runCapture } = await import('./hook-runtime.js');
  const outcome = await runCapture(args, input);
  if (args.mode === 'foreground' && outcome.done === 'busy')
    say('another hook of this session is still capturing; the next event takes these turns');
  return 'done';
}

/** Runs one hook; resolves when it is done, having said any failure on stderr (and in the log for the worker). */
export async function main(argv: readonly string[]): Promise<void> {
  const args = parseHookArgs(argv);
  const giveUp = setTimeout(
    () => {
      say(`gave up after ${deadlineMs(args.event, args.mode)} ms (the agent goes on; the next event captures what this one did not)`);
      process.exit(0);
    },
    deadlineMs(args.event, args.mode),
  );
  giveUp.unref();
  let how: 'detached' | 'done' = 'done';
  try {
    how = await run(argv, args);
  } catch (error) {
    say(
      `${args.event ?? 'hook'} ${args.client}: ${(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''}`,
      args.mode === 'worker',
    );
  } finally {
    clearTimeout(giveUp);
    process.exitCode = 0;
  }
  // Whatever the memory left open (a pool, a timer) must not hold the client's hook: done is done.
  // A detached hook instead lets its write to the worker's stdin finish, then ends by itself.
  if (how === 'done' && exitWhenDone)
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve())).then(() => process.exit(0));
}

/** Set when this module is the process's entry point (not imported by a test or by main.ts's `hook` command). */
let exitWhenDone = false;

function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  exitWhenDone = true;
  // Node 22+ keeps the compiled code of what a hook loads, so the next hook starts sooner (Node 20 has no such cache).
  (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  process.on('uncaughtException', (error) => {
    say(error.message.split('\n')[0] ?? 'failed');
    process.exit(0);
  });
  process.on('unhandledRejection', (error) => {
    say(String(error instanceof Error ? error.message : error).split('\n')[0] ?? 'failed');
    process.exit(0);
  });
  void main(process.argv.slice(2));
}
