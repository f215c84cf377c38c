/**
 * MCP test files once more, on PostgreSQL: the same files (the official tools, graph paging,
 * hybrid_search, the maintenance tools with and without the real model, reflections, long entities, issue 25's seed behaviours, Unicode, issue 33's question words and names, issue 35's hub of 150,000 relations), their harness given a store on a fresh database of a real server
 * hybrid_search and its defaults (issue 37), the speaker lift (issue 37), the maintenance tools with and without the real model, reflections, long entities, issue 25's seed behaviours, Unicode, issue 33's question words and names, issue 35's adversarial text), their harness given a store on a fresh database of a real server
 * (test/helpers/pg-server.ts) instead of a SQLite file. Skipped, saying why, when no server starts.
 */
import { afterAll, describe, it, vi } from 'vitest';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import type * as Fixtures from '../helpers/fixtures.js';
import type { HarnessOptions } from '../helpers/fixtures.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';

const started = await startPgServer();
const server: PgServer | undefined = 'url' in started ? started : undefined;
(globalThis as { limbicPgServer?: PgServer }).limbicPgServer = server;

vi.mock('../helpers/fixtures.js', async (importOriginal) => {
  const original = await importOriginal<typeof Fixtures>();
  return {
    ...original,
    harness: async (options: HarnessOptions = {}) => {
      const pg = (globalThis as { limbicPgServer?: PgServer }).limbicPgServer;
      if (pg === undefined || options.store !== undefined || options.path !== undefined) return original.harness(options);
      return original.harness({ ...options, store: openPgStore({ url: await pg.createDatabase(), poolSize: 4 }) });
    },
  };
});

afterAll(async () => {
  await server?.stop();
});

if (server === undefined) {
  describe('MCP tools on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in started ? started.unavailable : ''}`, () => undefined);
  });
} else {
  await import('./tools.test.js');
  await import('./graph-paging.test.js');
  await import('./hybrid-search.test.js');
  await import('./hybrid-defaults.test.js');
  await import('./speaker-lift.test.js');
  await import('./maintenance.test.js');
  await import('./maintenance-semantic.test.js');
  await import('./reflections.test.js');
  await import('./long-entities.test.js');
  await import('./notes-in-another-language.test.js');
  await import('./seed-behaviours.test.js');
  await import('./unicode.test.js');
  await import('./search-precision.test.js');
  await import('./relation-pages.test.js');
  await import('./adversarial-text.test.js');
}
