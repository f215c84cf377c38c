/**
 * The in-memory vector cache saved next to the database as `<db>.vectors`, so a restart reads it in
 * one sequential pass instead of rebuilding it from sqlite-vec's chunks (reading, normalising and
 * quantising every vector: most of the 18.6 s first semantic answer at 1M entities, issue 10).
 *
 * A derived file: deleting it only makes the next start slower. It is never trusted blindly: the
 * header names the database (meta `database_id`), the model and size, and the `vector_log` position
 * it reflects; every section carries a CRC-32; the caller checks the position against the log
 * before the body is read, and replays the log from there.
 *
 * Layout, little-endian:
 *
 *     0  'LIMBICVC'                      magic
 *     8  u32 format version
 *    12  u32 dims
 *    16  f64 count                       vectors held
 *    24  f64 seq                         the vector_log position the vectors reflect
 *    32  f64 seq mark                    the mark of the row logged at seq: its entity and random
 *                                        nonce (sqlite-connection.ts logMark), tying the file to this log
 *    40  f64 scale                       int8 = round(float × scale)
 *    48  u32 × 3                         CRC-32 of the ids, vectors and quantized sections
 *    60  u16 + 64 bytes                  database id (utf-8)
 *   126  u16 + 256 bytes                 model id (utf-8)
 *   508  u32                             CRC-32 of bytes 0..507
 *   512  f64 × count                     entity ids
 *        f32 × count × dims              unit vectors
 *        i8  × count × dims              their int8 copy
 *
 * Writers write a temp file with a unique name, fsync it and rename it over the old one (atomic),
 * so two processes saving at once never mix their bytes: the last rename wins, and readers validate.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { PRIVATE_FILE_MODE } from '../private-files.js';
import { processAlive } from '../../../os/process-alive.js';

/** Where the cache of the database at `dbPath` is kept. */
export const vectorFilePath = (dbPath: string): string => `${dbPath}.vectors`;

const MAGIC = 'LIMBICVC';
/** Bumped on any change of the layout; a file of another version is rebuilt. 2: `seq entity` is the row's mark. */
export const VECTOR_FILE_VERSION = 2;
const HEADER_BYTES = 512;
const DB_ID_BYTES = 64;
const MODEL_BYTES = 256;
/** Bytes moved per read or write call: large enough to stream, small enough to check often. */
const CHUNK_BYTES = 16 << 20;
/** A temp file this old is a crashed writer's leftover whatever its pid says. */
const STALE_TEMP_MS = 60 * 60 * 1000;

export interface VectorFileHeader {
  readonly dims: number;
  readonly count: number;
  readonly seq: number;
  /** The mark of the row logged at `seq` (logMark: entity and nonce; 0 when seq is 0). */
  readonly seqEntity: number;
  readonly scale: number;
  readonly databaseId: string;
  readonly model: string;
}

/** The cache's arrays; for writing, views of exactly `count` rows. */
export interface VectorFileBody {
  readonly ids: Float64Array;
  readonly vectors: Float32Array;
  readonly quantized: Int8Array;
}

/** What a file must match to be read at all. */
export interface VectorFileExpectation {
  readonly dims: number;
  readonly model: string;
  readonly databaseId: string;
}

export type VectorFileRead =
  | { readonly kind: 'missing' }
  /** `stale`: a sound file that fell behind (expected after a model change or a long pause); `invalid`: damaged or foreign. */
  | { readonly kind: 'rejected'; readonly reason: string; readonly stale: boolean }
  | { readonly kind: 'read'; readonly header: VectorFileHeader; readonly body: VectorFileBody };

/** Why a file cannot be used, from the header alone; undefined when it can. */
export type HeaderCheck = (header: VectorFileHeader) => { readonly reason: string; readonly stale: boolean } | undefined;

const sectionBytes = (count: number, dims: number): readonly [number, number, number] => [count * 8, count * dims * 4, count * dims];

const bytesOf = (a: Float64Array | Float32Array | Int8Array, length = a.byteLength): Uint8Array =>
  new Uint8Array(a.buffer, a.byteOffset, length);

/**
 * Reads the file into arrays from `allocate` (which may leave room to grow), checking the header
 * against `expect` and `check` before the body is read and every section's CRC after.
 */
export async function readVectorFile(
  path: string,
  expect: VectorFileExpectation,
  check: HeaderCheck,
  allocate: (count: number, dims: number) => VectorFileBody,
): Promise<VectorFileRead> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'rejected', reason: `cannot be opened: ${(error as Error).message}`, stale: false };
  }
  try {
    const size = (await file.stat()).size;
    const raw = Buffer.alloc(HEADER_BYTES);
    if (size < HEADER_BYTES || (await file.read(raw, 0, HEADER_BYTES, 0)).bytesRead !== HEADER_BYTES) {
      return { kind: 'rejected', reason: 'it is truncated (shorter than its header)', stale: false };
    }
    const decoded = decodeHeader(raw);
    if (typeof decoded === 'string') return { kind: 'rejected', reason: decoded, stale: false };
    const { header, crcs } = decoded;
    if (header.databaseId !== expect.databaseId) return { kind: 'rejected', reason: 'it was written for another database', stale: false };
    if (header.dims !== expect.dims || header.model !== expect.model) {
      return {
        kind: 'rejected',
        reason: `it holds ${header.model} (${header.dims} dims), the database ${expect.model} (${expect.dims})`,
        stale: true,
      };
    }
    const sections = sectionBytes(header.count, header.dims);
    const expected = HEADER_BYTES + sections[0] + sections[1] + sections[2];
    if (size !== expected) {
      return { kind: 'rejected', reason: `it is ${size} bytes where its header implies ${expected} (truncated or damaged)`, stale: false };
    }
    const problem = check(header);
    if (problem !== undefined) return { kind: 'rejected', ...problem };
    const body = allocate(header.count, header.dims);
    let position = HEADER_BYTES;
    const targets = [
      { name: 'ids', array: body.ids },
      { name: 'vectors', array: body.vectors },
      { name: 'int8 vectors', array: body.quantized },
    ];
    for (const [s, { name, array }] of targets.entries()) {
      const length = sections[s] ?? 0;
      if (array.byteLength < length) throw new Error(`the ${name} array is smaller than the file's section`);
      const crc = await readSection(file, bytesOf(array, length), position);
      if (crc !== crcs[s]) return { kind: 'rejected', reason: `its ${name} do not match their checksum (damaged)`, stale: false };
      position += length;
    }
    return { kind: 'read', header, body };
  } catch (error) {
    return { kind: 'rejected', reason: `reading it failed: ${(error as Error).message}`, stale: false };
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** The header of the file at `path`, or undefined when there is none or it does not decode. */
export async function peekVectorFile(path: string): Promise<VectorFileHeader | undefined> {
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'r');
    const raw = Buffer.alloc(HEADER_BYTES);
    if ((await file.read(raw, 0, HEADER_BYTES, 0)).bytesRead !== HEADER_BYTES) return undefined;
    const decoded = decodeHeader(raw);
    return typeof decoded === 'string' ? undefined : decoded.header;
  } catch {
    return undefined;
  } finally {
    await file?.close().catch(() => undefined);
  }
}

/**
 * Writes `body` (views of exactly header.count rows) to a unique temp file, fsyncs it and renames
 * it to `path`. `unchanged` is asked between chunks: the arrays are written in place while the
 * event loop runs, so a change made meanwhile (a search applying the log) abandons the write.
 * Resolves to false when abandoned; an I/O error removes the temp file and is thrown.
 */
export async function writeVectorFile(
  path: string,
  header: VectorFileHeader,
  body: VectorFileBody,
  unchanged: () => boolean,
): Promise<boolean> {
  const temp = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  const file = await open(temp, 'wx', PRIVATE_FILE_MODE);
  let done = false;
  try {
    const crcs: number[] = [];
    let position = HEADER_BYTES;
    for (const section of [body.ids, body.vectors, body.quantized]) {
      const bytes = bytesOf(section);
      let crc = 0;
      for (let offset = 0; offset < bytes.byteLength; offset += CHUNK_BYTES) {
        if (!unchanged()) return false;
        const chunk = bytes.subarray(offset, Math.min(bytes.byteLength, offset + CHUNK_BYTES));
        crc = crc32(chunk, crc);
        await writeAll(file, chunk, position);
        position += chunk.byteLength;
      }
      crcs.push(crc);
    }
    await writeAll(file, encodeHeader(header, crcs), 0);
    await file.sync();
    if (!unchanged()) return false;
    await file.close();
    await rename(temp, path);
    done = true;
    await syncFolder(dirname(path));
    return true;
  } finally {
    if (!done) {
      await file.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
    }
  }
}

/** Removes temp files left by writers that died (their pid is gone, or they are an hour old). */
export function removeStaleTempFiles(path: string): void {
  const folder = dirname(path);
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const match = name.startsWith(prefix) ? /^(\d+)-[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (match === null) continue;
    const full = join(folder, name);
    try {
      if (processAlive(Number(match[1])) && Date.now() - statSync(full).mtimeMs < STALE_TEMP_MS) continue;
      unlinkSync(full);
    } catch {
      // Gone already (its writer renamed it), or not ours to remove: either way nothing to do.
    }
  }
}

/** Reads a section in chunks, checksumming each one while the next is being read. */
async function readSection(file: FileHandle, target: Uint8Array, position: number): Promise<number> {
  let crc = 0;
  const chunkAt = (offset: number): Uint8Array => target.subarray(offset, Math.min(target.byteLength, offset + CHUNK_BYTES));
  let pending = target.byteLength > 0 ? readAll(file, chunkAt(0), position) : undefined;
  for (let offset = 0; pending !== undefined; offset += CHUNK_BYTES) {
    await pending;
    const next = offset + CHUNK_BYTES;
    pending = next < target.byteLength ? readAll(file, chunkAt(next), position + next) : undefined;
    crc = crc32(chunkAt(offset), crc);
  }
  return crc;
}

async function readAll(file: FileHandle, target: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < target.byteLength;) {
    const { bytesRead } = await file.read(target, done, target.byteLength - done, position + done);
    if (bytesRead === 0) throw new Error('the file ended early');
    done += bytesRead;
  }
}

async function writeAll(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.byteLength;) {
    const { bytesWritten } = await file.write(bytes, done, bytes.byteLength - done, position + done);
    done += bytesWritten;
  }
}

/** Makes the rename durable; best effort (some platforms cannot open a folder). */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    await handle.sync().finally(() => handle.close());
  } catch {
    // Without it the rename may be lost in a power cut: the old file stays, and is validated.
  }
}

function encodeHeader(header: VectorFileHeader, crcs: readonly number[]): Buffer {
  const raw = Buffer.alloc(HEADER_BYTES);
  raw.write(MAGIC, 0, 'latin1');
  raw.writeUInt32LE(VECTOR_FILE_VERSION, 8);
  raw.writeUInt32LE(header.dims, 12);
  raw.writeDoubleLE(header.count, 16);
  raw.writeDoubleLE(header.seq, 24);
  raw.writeDoubleLE(header.seqEntity, 32);
  raw.writeDoubleLE(header.scale, 40);
  crcs.forEach((c, i) => raw.writeUInt32LE(c, 48 + i * 4));
  writeString(raw, header.databaseId, 60, DB_ID_BYTES);
  writeString(raw, header.model, 126, MODEL_BYTES);
  raw.writeUInt32LE(crc32(raw.subarray(0, HEADER_BYTES - 4)), HEADER_BYTES - 4);
  return raw;
}

/** The header and section checksums, or why the bytes are not a header this code wrote. */
function decodeHeader(raw: Buffer): { header: VectorFileHeader; crcs: readonly number[] } | string {
  if (raw.toString('latin1', 0, 8) !== MAGIC) return 'it is not a Limbic vector cache file';
  if (raw.readUInt32LE(HEADER_BYTES - 4) !== crc32(raw.subarray(0, HEADER_BYTES - 4)))
    return 'its header does not match its checksum (damaged)';
  const version = raw.readUInt32LE(8);
  if (version !== VECTOR_FILE_VERSION) return `it has format version ${version}, this Limbic reads ${VECTOR_FILE_VERSION}`;
  const header: VectorFileHeader = {
    dims: raw.readUInt32LE(12),
    count: raw.readDoubleLE(16),
    seq: raw.readDoubleLE(24),
    seqEntity: raw.readDoubleLE(32),
    scale: raw.readDoubleLE(40),
    databaseId: readString(raw, 60, DB_ID_BYTES),
    model: readString(raw, 126, MODEL_BYTES),
  };
  const whole = (x: number): boolean => Number.isSafeInteger(x) && x >= 0;
  if (header.dims === 0 || !whole(header.count) || !whole(header.seq) || !Number.isSafeInteger(header.seqEntity) || !(header.scale > 0)) {
    return 'its header holds impossible values (damaged)';
  }
  return { header, crcs: [48, 52, 56].map((o) => raw.readUInt32LE(o)) };
}

function writeString(raw: Buffer, value: string, offset: number, room: number): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.byteLength > room) throw new Error(`"${value}" is longer than the ${room} bytes the vector cache file keeps for it`);
  raw.writeUInt16LE(bytes.byteLength, offset);
  bytes.copy(raw, offset + 2);
}

function readString(raw: Buffer, offset: number, room: number): string {
  return raw.toString('utf8', offset + 2, offset + 2 + Math.min(room, raw.readUInt16LE(offset)));
}
