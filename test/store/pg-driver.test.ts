/**
 * node-postgres is an optional dependency: an install without it opens SQLite as always, and the
 * first postgres:// database says what to install (issue 27). The missing module is faked (what
 * matters is the error Node throws for it); the present one is the real driver.
 */
import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../../src/core/errors.js';
import { loadPgDriver } from '../../src/store/postgres/pg-driver.js';

/** What `import('pg')` throws when node_modules has no pg (Node 20's message and code). */
function fakeMissingPg(): Promise<never> {
  const error = new Error("Cannot find package 'pg' imported from /opt/limbic/dist/store/postgres/pg-driver.js") as Error & {
    code: string;
  };
  error.code = 'ERR_MODULE_NOT_FOUND';
  return Promise.reject(error);
}

describe('loading the PostgreSQL driver', () => {
  it('loads the installed driver', async () => {
    const driver = await loadPgDriver();
    expect(typeof driver.Pool).toBe('function');
  });

  it('says what to install when the driver was left out', async () => {
    const error = await loadPgDriver(fakeMissingPg).catch((e: unknown) => e);
    expect(isMemoryError(error)).toBe(true);
    expect((error as Error).message).toMatch(/npm install --no-save pg@8 --prefix ".+"/);
    expect((error as Error).message).toContain('--omit=optional');
  });

  it('passes any other failure through unchanged', async () => {
    const other = new Error('pg failed to initialise');
    await expect(loadPgDriver(() => Promise.reject(other))).rejects.toBe(other);
  });
});
