/**
 * The token file of `limbic serve --http`: a small SQLite database beside the memory (its own file,
 * so the memory's schema and its backups stay as they were, and `token` commands never open the
 * memory). Holds hashes only; see src/store/token-store.ts. The OAuth server's tables live in the
 * same file (sqlite-oauth.ts).
 */
import Database from 'better-sqlite3';
import type { TokenEntry, TokenRecord, TokenStore } from '../token-store.js';
import { makePrivateDatabaseFile } from './private-files.js';
import { openSqliteOAuthStore } from './sqlite-oauth.js';

interface Row {
  id: string;
  namespace: string;
  read_only: number;
  label: string | null;
  created_at: number;
}

const toRecord = (row: Row): TokenRecord => ({
  id: row.id,
  namespace: row.namespace,
  readOnly: row.read_only === 1,
  label: row.label ?? undefined,
  createdAt: row.created_at,
});

/** Opens (creating when absent) the token file at `path`. */
export function openSqliteTokenStore(path: string): TokenStore {
  makePrivateDatabaseFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    read_only INTEGER NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL
  ) STRICT`);
  const insert = db.prepare('INSERT INTO tokens (id, hash, namespace, read_only, label, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const byHash = db.prepare<[string], Row>('SELECT id, namespace, read_only, label, created_at FROM tokens WHERE hash = ?');
  const all = db.prepare<[], Row>('SELECT id, namespace, read_only, label, created_at FROM tokens ORDER BY namespace, created_at');
  const remove = db.prepare('DELETE FROM tokens WHERE id = ?');
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM tokens');
  const entries = db.prepare<[], Row & { hash: string }>(
    'SELECT id, hash, namespace, read_only, label, created_at FROM tokens ORDER BY namespace, created_at',
  );
  const insertNew = db.prepare(
    'INSERT INTO tokens (id, hash, namespace, read_only, label, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const merge = db.transaction((list: readonly TokenEntry[]) =>
    list.reduce(
      (n, { record, hash }) =>
        n + insertNew.run(record.id, hash, record.namespace, record.readOnly ? 1 : 0, record.label ?? null, record.createdAt).changes,
      0,
    ),
  );
  const oauth = openSqliteOAuthStore(db);
  // Synchronous underneath; the interface is asynchronous for the PostgreSQL token table.
  return {
    oauth,
    async add(record, hash) {
      insert.run(record.id, hash, record.namespace, record.readOnly ? 1 : 0, record.label ?? null, record.createdAt);
    },
    async byHash(hash) {
      const row = byHash.get(hash);
      return row === undefined ? undefined : toRecord(row);
    },
    list: async () => all.all().map(toRecord),
    revoke: async (id) => remove.run(id).changes > 0,
    count: async () => count.get()?.n ?? 0,
    entries: async () => entries.all().map((row) => ({ record: toRecord(row), hash: row.hash })),
    merge: async (list) => merge(list),
    async close() {
      db.close();
    },
  };
}
