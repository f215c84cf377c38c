import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../src/os/process-alive.js';

describe('processAlive', () => {
  it('says this process runs', () => {
    expect(processAlive(process.pid)).toBe(true);
  });

  it('says a child runs until it has exited and been reaped, and not after', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const pid = child.pid as number;
    expect(processAlive(pid)).toBe(true);
    child.kill('SIGKILL');
    // 'exit' comes once Node has reaped it (waitpid): its pid names no process any more.
    await once(child, 'exit');
    expect(processAlive(pid)).toBe(false);
  });

  it('counts a process of another user as running (EPERM), when there is one to ask: pid 1', () => {
    // pid 1 always exists; as root the check succeeds, otherwise it answers EPERM. Either way: running.
    expect(processAlive(1)).toBe(true);
  });

  it('names no process for 0, negative or fractional pids (signal 0 to 0 or -1 would ask a whole group)', () => {
    for (const pid of [0, -1, -process.pid, 1.5, Number.NaN]) expect(processAlive(pid)).toBe(false);
  });
});
