/**
 * The top-k keyword index (keyword-topk.ts) saved next to the database as `<db>.keywords`, so a
 * restart reads its postings in one pass instead of rebuilding them from FTS5's vocabulary (about
 * 6 s at 100k entities on 2 shared cores, against a fraction of a second for the file).
 *
 * A derived file: deleting it only makes the next start slower. It names the database (meta
 * `database_id`) and the `keyword_log` position it reflects, with the mark of the row logged there
 * (its entity and random nonce), so the caller can check it against the log before trusting it and
 * replay the log from there; the body carries a CRC-32.
 *
 * Layout, little-endian: a 64-byte header
 *
 *     0  'LIMBICKW'   magic          8  u32 version     12  u32 terms (T)
 *    16  f64 seq                     24  f64 seq mark   32  f64 lengths (L)   40  f64 postings (P)
 *    48  u32 term bytes (S)          52  u32 CRC-32 of the body               56  u32 database id bytes
 *    60  u32 CRC-32 of bytes 0..59
 *
 * then the database id (utf-8, padded to 4 bytes), lengths i32 × L, per-term postings counts
 * u32 × T, ids i32 × P, tfs u16 × P, and the terms in utf-8 joined by newlines (S bytes): one
 * decode for all of them (per-term decoding was most of a 1.2 s load at 100k entities). The
 * tokenizer never puts a newline inside a term (unicode61 splits on it).
 * Written to a unique temp file and renamed over the old one, so concurrent savers never mix bytes.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { PRIVATE_FILE_MODE } from '../private-files.js';
import { KeywordTopK } from './keyword-topk.js';

export const keywordFilePath = (dbPath: string): string => `${dbPath}.keywords`;

const MAGIC = 'LIMBICKW';
/** Bumped on any layout change; a file of another version is rebuilt. 2: `seqEntity` is the row's mark. */
const VERSION = 2;
const HEADER = 64;

export interface KeywordFileHeader {
  readonly seq: number;
  /**
   * The mark of the log row at `seq` (sqlite-connection.ts logMark: its entity and random nonce; 0
   * when seq is 0): ties the file to this log, not a look-alike's or a restored copy's.
   */
  readonly seqEntity: number;
  readonly databaseId: string;
}

const pad4 = (n: number): number => (n + 3) & ~3;

/** Writes the index's base (the caller merges its delta first) with its log position. */
export async function saveKeywordFile(path: string, header: KeywordFileHeader, index: KeywordTopK): Promise<void> {
  const base = index.baseForSaving();
  const { terms, lengths } = base;
  const encoder = new TextEncoder();
  const termBlob = encoder.encode(terms.join('\n'));
  const T = terms.length;
  const P = base.ids.length;
  const S = termBlob.length;
  const dbId = encoder.encode(header.databaseId);
  const bodyBytes = pad4(dbId.length) + 4 * lengths.length + 4 * T + 4 * P + pad4(2 * P) + S;
  const buffer = new ArrayBuffer(HEADER + bodyBytes);
  const bytes = new Uint8Array(buffer);
  let at = HEADER;
  bytes.set(dbId, at);
  at += pad4(dbId.length);
  new Int32Array(buffer, at, lengths.length).set(lengths);
  at += 4 * lengths.length;
  new Uint32Array(buffer, at, T).set(base.counts);
  at += 4 * T;
  new Int32Array(buffer, at, P).set(base.ids);
  at += 4 * P;
  new Uint16Array(buffer, at, P).set(base.tfs);
  at += pad4(2 * P);
  bytes.set(termBlob, at);
  const view = new DataView(buffer);
  bytes.set(encoder.encode(MAGIC), 0);
  view.setUint32(8, VERSION, true);
  view.setUint32(12, T, true);
  view.setFloat64(16, header.seq, true);
  view.setFloat64(24, header.seqEntity, true);
  view.setFloat64(32, lengths.length, true);
  view.setFloat64(40, P, true);
  view.setUint32(48, S, true);
  view.setUint32(52, crc32(bytes.subarray(HEADER)), true);
  view.setUint32(56, dbId.length, true);
  view.setUint32(60, crc32(bytes.subarray(0, 60)), true);
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, bytes, { flush: true, mode: PRIVATE_FILE_MODE });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

export type KeywordFileRead =
  | { readonly kind: 'missing' }
  | { readonly kind: 'rejected'; readonly reason: string }
  | { readonly kind: 'read'; readonly header: KeywordFileHeader; readonly index: KeywordTopK };

/** Reads the file into a fresh index (its postings views of one buffer), checking database and checksums. */
export async function readKeywordFile(path: string, databaseId: string, mergeMin?: number): Promise<KeywordFileRead> {
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'rejected', reason: `it cannot be read: ${(error as Error).message}` };
  }
  // A copy at offset 0, so the typed-array views below are aligned.
  const buffer = new ArrayBuffer(file.length);
  const bytes = new Uint8Array(buffer);
  bytes.set(file);
  if (bytes.length < HEADER) return { kind: 'rejected', reason: 'it is truncated' };
  const view = new DataView(buffer);
  if (new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC) return { kind: 'rejected', reason: 'it is not a keyword index file' };
  if (view.getUint32(60, true) !== crc32(bytes.subarray(0, 60))) return { kind: 'rejected', reason: 'its header is damaged' };
  if (view.getUint32(8, true) !== VERSION) return { kind: 'rejected', reason: 'it has another format version' };
  const T = view.getUint32(12, true);
  const L = view.getFloat64(32, true);
  const P = view.getFloat64(40, true);
  const S = view.getUint32(48, true);
  const idBytes = view.getUint32(56, true);
  const expected = HEADER + pad4(idBytes) + 4 * L + 4 * T + 4 * P + pad4(2 * P) + S;
  if (bytes.length !== expected) return { kind: 'rejected', reason: 'it is truncated or padded' };
  const decoder = new TextDecoder();
  let at = HEADER;
  const fileDb = decoder.decode(bytes.subarray(at, at + idBytes));
  if (fileDb !== databaseId) return { kind: 'rejected', reason: 'it was written for another database' };
  if (view.getUint32(52, true) !== crc32(bytes.subarray(HEADER)))
    return { kind: 'rejected', reason: 'its body does not match its checksum (damaged)' };
  at += pad4(idBytes);
  const lengths = new Int32Array(buffer, at, L);
  at += 4 * L;
  const counts = new Uint32Array(buffer, at, T);
  at += 4 * T;
  const ids = new Int32Array(buffer, at, P);
  at += 4 * P;
  const tfs = new Uint16Array(buffer, at, P);
  at += pad4(2 * P);
  const terms = T === 0 ? [] : decoder.decode(bytes.subarray(at, at + S)).split('\n');
  if (terms.length !== T) return { kind: 'rejected', reason: 'its terms do not add up (damaged)' };
  let sum = 0;
  for (let i = 0; i < T; i++) sum += counts[i] as number;
  if (sum !== P) return { kind: 'rejected', reason: 'its postings do not add up (damaged)' };
  const index = new KeywordTopK(mergeMin);
  // In slices, the event loop free between them: at 1M entities this was 1.5 s in one piece.
  await index.loadBase(terms, counts, ids, tfs, lengths, () => new Promise((resolve) => setImmediate(resolve)));
  return { kind: 'read', header: { seq: view.getFloat64(16, true), seqEntity: view.getFloat64(24, true), databaseId: fileDb }, index };
}
