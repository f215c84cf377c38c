/**
 * A process's CPU time and resident memory from /proc (Linux), for the benches that measure a
 * server from outside it (http-load.ts, soak.ts). CPU time moves less with other work on a shared
 * machine than latency does, so it says what a call costs the server even when the machine is busy.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times. */
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system, ms) a process has used: all its threads, or with `thread` one of them (its main thread's id is the process's). */
export function cpuMs(pid: number, thread?: number): number {
  const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are the 14th and 15th fields; `fields` starts at the 3rd.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}

/** A process's resident memory, in MB. */
export const residentMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
