/** Runs the built hook (dist/cli/hook.js) as a client does: arguments, the event's JSON on stdin, its own environment. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './fixtures.js';

export const HOOK = join(REPO_ROOT, 'dist', 'cli', 'hook.js');

export interface HookRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs hook.js with `args`, `input` on stdin, and a clean environment around `env`. */
export function runHook(args: readonly string[], input: string, env: Record<string, string> = {}): Promise<HookRun> {
  return runWithInput(
    spawn(process.execPath, [HOOK, ...args], {
      env: { PATH: process.env.PATH ?? '', LIMBIC_DB: '', LIMBIC_NAMESPACE: '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
    input,
  );
}

/** Writes `input` to a spawned process's stdin and collects what it prints until it exits. */
export function runWithInput(child: ChildProcessWithoutNullStreams, input: string): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Waits until no background capture of this state folder runs (Linux: the workers' command lines in /proc). */
export async function workersDone(stateDir: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const running = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .some((pid) => {
        try {
          const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          return cmd.includes('--worker') && cmd.includes(stateDir);
        } catch {
          return false;
        }
      });
    if (!running) return;
    if (Date.now() > until) throw new Error('background captures still running');
    await new Promise((r) => setTimeout(r, 100));
  }
}
