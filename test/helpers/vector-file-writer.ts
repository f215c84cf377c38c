/**
 * A second process for test/store/vector-cache-file.test.ts: loads the vector cache of a database
 * from sqlite-vec and writes its file `rounds` times in a row (no "already saved" shortcut), so
 * two of these race on the same file. Run with `node --import tsx`.
 *
 *   vector-file-writer.ts DB_PATH ROUNDS
 */
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import usearch from 'usearch';
import { vectorFilePath, writeVectorFile } from '../../src/store/sqlite/vector-cache/vector-cache-file.js';
import { VectorCache, type ExactSearch } from '../../src/store/sqlite/vector-cache/vector-cache.js';

const [dbPath = '', rounds = '1'] = process.argv.slice(2);
const db = new Database(dbPath);
sqliteVec.load(db);
const meta = (key: string): string => db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value ?? '';
const cache = VectorCache.load(db, usearch.exactSearch as unknown as ExactSearch, Number(meta('vector_dims')));
const snapshot = cache.snapshot();
if (snapshot === undefined) throw new Error('no snapshot: the log entry at the cache position is gone');
const header = { ...snapshot.header, databaseId: meta('database_id'), model: meta('vector_model') };
for (let i = 0; i < Number(rounds); i++) {
  if (!(await writeVectorFile(vectorFilePath(dbPath), header, snapshot.body, () => true))) throw new Error('write abandoned');
}
db.close();
