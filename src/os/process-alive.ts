/**
 * Whether a process runs, for the files and claims a process leaves behind it (a temporary file
 * named by its pid, a queue claim, a model being installed): one that runs may still finish them.
 */

/**
 * Whether process `pid` exists: signal 0 checks without sending anything. EPERM means it exists
 * but belongs to another user, so it counts as running; ESRCH (or anything else) means it does not.
 * A pid that names no single process (0, negative, not an integer) is not one.
 * @example processAlive(process.pid) // true
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
