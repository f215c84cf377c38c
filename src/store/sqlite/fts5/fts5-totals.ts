/**
 * FTS5's corpus totals (its averages record, row 1 of the `%_data` shadow table: the row count,
 * then each column's token total, as varints), kept exact for a contentless_delete table.
 *
 * bm25() takes N and the average length from that record. A DELETE from a contentless_delete=1
 * table only writes a tombstone: FTS5 cannot tokenize text it does not keep, so it never takes the
 * row off the totals (fts5_storage.c, fts5StorageContentlessDelete). Every rewrite of an entity's
 * keyword row (a delete, then an insert) therefore counted the entity again: after one added
 * observation per entity, N and the average length were about twice the truth, so SQLite's BM25
 * differed from PostgreSQL's (whose totals are exact) and drifted further with every write.
 *
 * The deleted row's own counts are still readable before the delete (its `%_docsize` row); they are
 * summed over a transaction and taken off the record once, just before the commit. FTS5 keeps the
 * totals in memory during a transaction and writes them at a savepoint or commit, so a savepoint
 * first makes it write them (and read them afresh afterwards), then the record is rewritten.
 */
import type Database from 'better-sqlite3';

/** The `%_data` rowid of the averages record (FTS5_AVERAGES_ROWID in fts5_index.c). */
const AVERAGES_ROWID = 1;

/** Rows and per-column tokens. */
export interface Fts5Totals {
  rows: number;
  readonly tokens: number[];
}

/** Decodes SQLite varints (big-endian groups of 7 bits, a set high bit means more; the 9th byte has 8 bits). */
export function decodeVarints(block: Uint8Array): number[] {
  const values: number[] = [];
  let at = 0;
  while (at < block.length) {
    let value = 0;
    for (let i = 0; i < 9; i++) {
      const byte = block[at++] ?? 0;
      if (i === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    values.push(value);
  }
  return values;
}

/** Encodes non-negative integers below 2^56 as SQLite varints (sqlite3PutVarint). */
export function encodeVarints(values: readonly number[]): Buffer {
  const bytes: number[] = [];
  for (const v of values) {
    const groups: number[] = [];
    let rest = Math.max(0, Math.floor(v));
    do {
      groups.unshift(rest % 128);
      rest = Math.floor(rest / 128);
    } while (rest > 0);
    groups.forEach((g, i) => bytes.push(i < groups.length - 1 ? g | 0x80 : g));
  }
  return Buffer.from(bytes);
}

/** A row's token count per column, from `%_docsize`, or undefined when the table has no such row. */
export function rowSizes(db: Database.Database, table: string, rowid: number): number[] | undefined {
  const row = db.prepare<[number], { sz: Buffer | null }>(`SELECT sz FROM ${table}_docsize WHERE id = ?`).get(rowid);
  return row?.sz === undefined || row.sz === null ? undefined : decodeVarints(row.sz);
}

/** Adds one row's sizes to a running sum of removed rows. */
export function addRemoved(sum: Fts5Totals, sizes: readonly number[]): void {
  sum.rows++;
  sizes.forEach((n, i) => (sum.tokens[i] = (sum.tokens[i] ?? 0) + n));
}

/**
 * Rewrites the averages record inside the open transaction: `change` maps the totals FTS5 wrote to
 * the right ones. The savepoint makes FTS5 write its in-memory totals first and read them afresh
 * after; the record is a shadow table, writable only outside SQLite's defensive mode.
 */
function rewriteTotals(db: Database.Database, table: string, change: (totals: Fts5Totals) => Fts5Totals): void {
  db.exec('SAVEPOINT fts5_totals');
  try {
    const block = db.prepare<[number], { block: Buffer }>(`SELECT block FROM ${table}_data WHERE id = ?`).get(AVERAGES_ROWID)?.block;
    const [rows = 0, ...tokens] = block === undefined ? [] : decodeVarints(block);
    const next = change({ rows, tokens });
    if (block === undefined && next.rows === 0) {
      db.exec('RELEASE fts5_totals'); // an empty table that never had a row: nothing to correct
      return;
    }
    db.unsafeMode(true);
    try {
      db.prepare(`INSERT OR REPLACE INTO ${table}_data (id, block) VALUES (?, ?)`).run(
        AVERAGES_ROWID,
        encodeVarints([next.rows, ...next.tokens]),
      );
    } finally {
      db.unsafeMode(false);
    }
    db.exec('RELEASE fts5_totals');
  } catch (error) {
    db.exec('ROLLBACK TO fts5_totals');
    db.exec('RELEASE fts5_totals');
    throw error;
  }
}

/** Takes rows deleted in the open transaction off the table's totals (see the top of this file). */
export function subtractRemoved(db: Database.Database, table: string, removed: Fts5Totals): void {
  if (removed.rows === 0) return;
  rewriteTotals(db, table, (t) => ({
    rows: Math.max(0, t.rows - removed.rows),
    tokens: t.tokens.map((n, i) => Math.max(0, n - (removed.tokens[i] ?? 0))),
  }));
}

/** Sets the totals to what the table holds (its `%_docsize` rows): once, for totals that drifted before. */
export function recountTotals(db: Database.Database, table: string): void {
  const sum: Fts5Totals = { rows: 0, tokens: [] };
  for (const r of db.prepare<[], { sz: Buffer | null }>(`SELECT sz FROM ${table}_docsize`).iterate()) {
    addRemoved(sum, r.sz === null ? [] : decodeVarints(r.sz));
  }
  rewriteTotals(db, table, (t) => ({
    rows: sum.rows,
    tokens: Array.from({ length: Math.max(t.tokens.length, sum.tokens.length) }, (_, i) => sum.tokens[i] ?? 0),
  }));
}
