/**
 * The schemas of a PostgreSQL database that hold a Limbic memory (an `entities` table), for
 * `limbic migrate --all-namespaces`: the caller maps them to namespaces (src/http/namespaces.ts).
 */
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { redactPassword } from '../../core/redact.js';
import { loadPgDriver } from './pg-driver.js';

export async function pgMemorySchemas(url: string): Promise<{ readonly defaultSchema: boolean; readonly schemas: string[] }> {
  const driver = await loadPgDriver();
  const client = new driver.Client({ connectionString: url, application_name: 'limbic-migrate' });
  await client.connect().catch((cause: unknown) => {
    throw new MemoryError(
      ERROR_CODES.STORE_FAILED,
      `Cannot connect to PostgreSQL at ${redactPassword(url)}: ${(cause as Error).message}. Check that the server runs and the URL is right.`,
      { cause },
    );
  });
  try {
    const rows = (
      await client.query<{ schema: string; current: boolean }>(
        `SELECT n.nspname AS schema, n.nspname = current_schema() AS current
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relname = 'entities' AND c.relkind IN ('r', 'p') ORDER BY n.nspname`,
      )
    ).rows;
    return { defaultSchema: rows.some((r) => r.current), schemas: rows.filter((r) => !r.current).map((r) => r.schema) };
  } finally {
    await client.end().catch(() => undefined);
  }
}
