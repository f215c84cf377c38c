/** How the CLI's commands print an answer and end on an error. */
import { isMemoryError } from '../core/errors.js';

/** An answer as indented JSON on stdout. */
export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Says what went wrong on stderr (a MemoryError's message already says what to do) and exits 1. */
export function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`limbic: ${isMemoryError(error) ? message : `error: ${message}`}\n`);
  process.exit(1);
}
