/**
 * Entity vectors held in memory and scanned with SIMD (usearch's exactSearch). The scan reads an
 * int8 copy (a quarter of the bytes of float32: 5 ms instead of 18 ms at 100k vectors on this
 * machine), keeps twice the wanted count (at least 100 more), and re-scores those on the float32
 * vectors, so distances are exact; recall@30 against sqlite-vec's float32 scan is tested (>= 0.99)
 * and reported by bench/latency.
 * The vec0 table stays the source of truth; every vector write also appends to `vector_log`, and a
 * cache replays the log before each search, so writes made by another process on the same file
 * are seen. A cache that fell behind a pruned log, or saw the model change, reloads whole.
 * A restart reads the cache saved in the file next to the database (vector-cache-file.ts, saved by
 * vector-cache-keeper.ts) and replays the log from the position saved with it.
 *
 * Over 400 lines on purpose: the float32 rows, their int8 copy and scale, the id → row map and the
 * log position are one invariant (every row in all four, at one log position); each method below
 * keeps it, and splitting them across files would spread that invariant out of sight.
 */
import type Database from 'better-sqlite3';
import { logMark } from '../sqlite-connection.js';
import type { VectorFileBody, VectorFileHeader } from './vector-cache-file.js';
import { ScanHelper } from './scan-helper.js';
import { MAX_CODE_DIMS, SignCodes, signCodesSupported } from './sign-codes.js';

/** What a search needs from usearch, imported lazily by the store. */
export interface ExactSearch {
  (
    dataset: Float32Array | Int8Array,
    query: Float32Array | Int8Array,
    dims: number,
    k: number,
    metric: 'ip',
    threads?: number,
  ): {
    keys: BigUint64Array;
    distances: Float32Array;
  };
}

/** Log entry meaning "every vector changed" (a new model or size). */
export const RESET_ALL = -1;
/** Log rows kept; a cache further behind than this reloads. */
export const LOG_KEEP = 100_000;
/**
 * The int8 scan keeps max(2k, k + 100) candidates for exact re-scoring: the quantization error
 * moves a vector a few places at most, and re-scoring 4k at k = 150 cost more than the scan at 10k.
 */
const OVERSAMPLE = 2;
const OVERSAMPLE_MIN = 100;
/** Below this many vectors the float32 scan is as fast, and is used alone. */
const QUANTIZE_FROM = 4096;
/**
 * From this many vectors the scan reads sign codes (sign-codes.ts) instead of the whole int8 copy:
 * the SIGN_POOL nearest by Hamming distance (at least SIGN_OVERSAMPLE × k), narrowed to the
 * SIGN_RERANK (at least SIGN_RERANK_OVERSAMPLE × k) with the largest dot product estimated from
 * their codes, go through the int8 scan, and its best through the float32 re-scoring. On vectors
 * derived from real e5 vectors (bench/latency/vector-leg.ts), recall@150 at 1M: 0.998 with the
 * 16,384 all through the int8 scan; 0.997 narrowed to 3,072, 0.994 to 2,048.
 */
export const SIGN_FROM = 200_000;
export const SIGN_POOL = 16_384;
const SIGN_OVERSAMPLE = 64;
export const SIGN_RERANK = 3072;
const SIGN_RERANK_OVERSAMPLE = 16;
/** Rows of a cache read from its file compared with the table before it is trusted. */
const SPOT_CHECKS = 8;

/** Why saved vectors cannot be used: `stale` when they are sound but behind, otherwise damaged or foreign. */
export interface Unusable {
  readonly reason: string;
  readonly stale: boolean;
}

export class VectorCache {
  private data: Float32Array;
  /** data × scale, rounded and clamped to int8: what the scan reads. */
  private quantized: Int8Array;
  /** Chosen at load from the largest component seen, so the int8 range is used fully. */
  private scale = 127 / 0.5;
  private ids: Float64Array;
  private readonly rowOf = new Map<number, number>();
  private count = 0;
  private seq = 0;
  /** Grows on every change of the arrays: a save under way compares it to know its snapshot held. */
  private changes = 0;
  /**
   * Sign codes of the rows minus `centre` (the mean of the vectors at the last load), valid for
   * rows below `signedRows` (built a slice at a time after a load); undefined where the runtime
   * has no WebAssembly SIMD or the vectors are too long for the kernel.
   */
  private signs: SignCodes | undefined;
  private centre: Float32Array;
  private signedRows = 0;
  /** Grows when a build of the sign codes starts: an older build still stepping then stops. */
  private signBuild = 0;
  /** While a build runs, rows appended past `signedRows` are left to it. */
  private signsBuilding = false;
  /** Rows the centre was the mean of: a memory that grew to twice that is centred again. */
  private centredOn = 0;
  /** Asked before every search, so prepared once. */
  private readonly latest: Database.Statement<[], { seq: number }>;

  private constructor(
    private readonly db: Database.Database,
    private readonly exactSearch: ExactSearch,
    readonly dims: number,
    arrays: VectorFileBody = VectorCache.allocate(0, dims),
  ) {
    this.latest = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'");
    this.data = arrays.vectors;
    this.quantized = arrays.quantized;
    this.ids = arrays.ids;
    this.centre = new Float32Array(dims);
    if (dims <= MAX_CODE_DIMS && signCodesSupported()) this.signs = new SignCodes(dims, this.ids.length);
  }

  /**
   * A cache of vectors already in memory (a benchmark's or a test's), at log position 0: `vectors`
   * holds ids.length rows of `dims`. The sign codes are built before it returns.
   */
  static fromVectors(db: Database.Database, exactSearch: ExactSearch, dims: number, ids: Float64Array, vectors: Float32Array): VectorCache {
    const cache = new VectorCache(db, exactSearch, dims, VectorCache.allocate(ids.length, dims));
    for (let row = 0; row < ids.length; row++) {
      const v = vectors.subarray(row * dims, (row + 1) * dims);
      cache.upsert(ids[row] as number, Buffer.from(v.buffer, v.byteOffset, v.byteLength), false);
    }
    run(cache.requantize());
    run(cache.encodeSigns());
    return cache;
  }

  /** Centres and encodes the sign codes again, at once (what a load does a slice at a time; for benchmarks). */
  buildSigns(): void {
    run(this.encodeSigns());
  }

  /**
   * Scans the sign codes of at least `splitFrom` rows on two threads: this one and `helper`'s
   * worker, sharing the codes (scan-helper.ts); undefined scans on this thread alone.
   */
  shareScan(helper: ScanHelper | undefined, splitFrom = 0): void {
    this.signs = this.signs?.grown(this.ids.length, this.signedRows, { helper, splitFrom });
  }

  /**
   * From `rows` rows, searches scan the sign codes on two threads: a worker (scan-helper.ts) is
   * started by the first such search and used from when it is up. Infinity: always one thread.
   */
  splitScanFrom(rows: number): void {
    this.splitFrom = rows;
  }
  private splitFrom = Number.POSITIVE_INFINITY;
  private helper: ScanHelper | undefined;
  private closed = false;

  /** Threads the sign-code scan runs on now: 2 once the worker is up (and while it works), else 1. */
  get scanThreads(): number {
    return this.helper !== undefined && !this.helper.broken ? 2 : 1;
  }

  /** Searches whose sign-code scan was shared with the worker. */
  get splitScans(): number {
    return this.signs?.splits ?? 0;
  }

  /** Ends the scan's worker, if one was started. */
  close(): void {
    this.closed = true;
    this.helper?.close();
  }

  private startHelper(): void {
    const splitFrom = this.splitFrom;
    this.splitFrom = Number.POSITIVE_INFINITY; // once
    ScanHelper.start().then(
      (helper) => {
        if (this.closed) return helper.close();
        this.helper = helper;
        this.shareScan(helper, splitFrom);
      },
      () => undefined, // no worker threads here: one thread scans
    );
  }

  /** Whether searches read the sign codes now (a large cache whose codes are built). */
  get scansSigns(): boolean {
    return this.signs !== undefined && this.count >= SIGN_FROM && this.signedRows >= this.count;
  }

  /**
   * How the last reload read the vectors: 'file' from the saved cache (then the log since),
   * 'chunks' straight from sqlite-vec's storage (1M vectors in seconds), or 'rows' through the vec0
   * table (about 15x slower), when the storage is not the layout this code knows.
   */
  loadedFrom: 'file' | 'chunks' | 'rows' = 'rows';

  /** Arrays for `count` rows and room for a few more, so the first writes after a load do not copy them all. */
  static allocate(count: number, dims: number): VectorFileBody {
    const capacity = count + 1024 + (count >> 6);
    return { ids: new Float64Array(capacity), vectors: new Float32Array(capacity * dims), quantized: new Int8Array(capacity * dims) };
  }

  /**
   * Whether vectors saved at log position `seq` can be brought up to date by replaying the log:
   * every later entry is still there, none is a reset, and the entry at `seq` is the one the saver
   * saw (a file from a copy of this database that went its own way differs there). Undefined when
   * they can.
   */
  static replayableFrom(db: Database.Database, seq: number, seqEntity: number): Unusable | undefined {
    const latest = db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'").get()?.seq ?? 0;
    if (seq > latest)
      return {
        reason: `it reflects vector log position ${seq}, past this database's ${latest} (was the database restored from an older copy?)`,
        stale: false,
      };
    if (seq > 0) {
      const logged = markAt(db, seq);
      if (logged === undefined) return { reason: `the vector log no longer reaches back to its position ${seq}`, stale: true };
      if (logged !== seqEntity)
        return {
          reason: `the vector log differs from it at position ${seq} (a restored or copied database wrote other rows there)`,
          stale: false,
        };
    } else if ((db.prepare<[], { s: number | null }>('SELECT min(seq) AS s FROM vector_log').get()?.s ?? 1) > 1) {
      return { reason: 'the vector log no longer reaches back to its start', stale: true };
    }
    if (db.prepare('SELECT 1 FROM vector_log WHERE seq > ? AND entity_id = ? LIMIT 1').get(seq, RESET_ALL) !== undefined) {
      return { reason: 'the vectors were reset (a new model) after it was saved', stale: true };
    }
    return undefined;
  }

  /**
   * A cache from arrays read from its file, brought up to date by replaying the log since the
   * file's position (in steps, with the event loop free between them), and checked against the
   * table before it is trusted: the counts must agree and sampled rows must equal the stored
   * vectors. Why not, when they do not.
   */
  static async fromFile(
    db: Database.Database,
    exactSearch: ExactSearch,
    dims: number,
    header: VectorFileHeader,
    body: VectorFileBody,
  ): Promise<VectorCache | Unusable> {
    const cache = new VectorCache(db, exactSearch, dims, body);
    cache.count = header.count;
    cache.seq = header.seq;
    cache.scale = header.scale;
    const repeated = await runYielding(cache.indexRows());
    if (repeated !== undefined) return { reason: `its ids are not unique integers (entity ${repeated}; damaged)`, stale: false };
    // Most of the log outside a transaction, so other tools run meanwhile; the rest inside, with the checks.
    if (!(await runYielding(cache.replayLog()))) return { reason: 'the vector log moved past it while it was read', stale: true };
    const adopted = db
      .transaction((): VectorCache | Unusable => {
        if (!cache.sync()) return { reason: 'the vector log moved past it while it was read', stale: true };
        const stored = cache.storedCount();
        if (stored !== undefined && stored !== cache.count) {
          return { reason: `it holds ${cache.count} vectors once the log is replayed where the database holds ${stored}`, stale: false };
        }
        const differing = cache.differingRow(SPOT_CHECKS);
        if (differing !== undefined) return { reason: `its vector of entity ${differing} differs from the database's`, stale: false };
        cache.loadedFrom = 'file';
        return cache;
      })
      .deferred();
    if (adopted instanceof VectorCache) adopted.encodeSignsLater();
    return adopted;
  }

  /** Reads every vector of the table in one consistent snapshot; `chunks` false forces the row path. */
  static load(db: Database.Database, exactSearch: ExactSearch, dims: number, chunks = true): VectorCache {
    const cache = new VectorCache(db, exactSearch, dims);
    cache.reload(chunks);
    return cache;
  }

  /**
   * The same, a few chunks at a time with the event loop free in between, so a server loading a
   * million vectors keeps answering its other tools. No single snapshot: the log position is taken
   * first, and the first search replays whatever changed while loading.
   */
  static async loadInBackground(db: Database.Database, exactSearch: ExactSearch, dims: number): Promise<VectorCache> {
    const cache = new VectorCache(db, exactSearch, dims);
    const seq = (cache.seq = cache.latestSeq());
    const total = cache.storedCount();
    if (total === undefined) return VectorCache.load(db, exactSearch, dims, false);
    cache.grow(total);
    if (!(await runYielding(cache.readAllChunks()))) return VectorCache.load(db, exactSearch, dims, false);
    // A count that does not add up while nobody wrote means a layout this code misreads.
    if (cache.count !== total && cache.latestSeq() === seq) return VectorCache.load(db, exactSearch, dims, false);
    await runYielding(cache.requantize());
    cache.loadedFrom = 'chunks';
    cache.encodeSignsLater();
    return cache;
  }

  get size(): number {
    return this.count;
  }

  /** The vector_log position this cache reflects. */
  get position(): number {
    return this.seq;
  }

  /** Grows whenever the arrays change. */
  get changeCount(): number {
    return this.changes;
  }

  /**
   * What the cache file saves, as views of the live arrays (valid while changeCount stays the
   * same); undefined when the log entry at the cache's position is gone, so a file could not be
   * checked against the log and would never be used.
   */
  snapshot():
    | { readonly header: Omit<VectorFileHeader, 'databaseId' | 'model'>; readonly body: VectorFileBody; readonly changes: number }
    | undefined {
    const seqEntity = this.seq > 0 ? markAt(this.db, this.seq) : 0;
    if (seqEntity === undefined) return undefined;
    const n = this.count;
    return {
      header: { dims: this.dims, count: n, seq: this.seq, seqEntity, scale: this.scale },
      body: {
        ids: this.ids.subarray(0, n),
        vectors: this.data.subarray(0, n * this.dims),
        quantized: this.quantized.subarray(0, n * this.dims),
      },
      changes: this.changes,
    };
  }

  /** Applies what other writers (this process included) logged since the last look; false when it must reload. */
  sync(): boolean {
    return this.applyLog(Number.MAX_SAFE_INTEGER) !== false;
  }

  /**
   * Applies up to `limit` log entries after the cache's position: true when that reached the end
   * of the log, 'more' when entries remain, false when the log no longer reaches back to the
   * position or holds a reset (the cache must reload).
   */
  private applyLog(limit: number): boolean | 'more' {
    const latest = this.latestSeq();
    if (latest === this.seq) return true;
    const oldest = this.db.prepare<[], { s: number | null }>('SELECT min(seq) AS s FROM vector_log').get()?.s ?? latest + 1;
    if (oldest > this.seq + 1) return false;
    const changes = this.db
      .prepare<[number, number], { seq: number; entity_id: number }>(
        'SELECT seq, entity_id FROM vector_log WHERE seq > ? ORDER BY seq LIMIT ?',
      )
      .all(this.seq, limit);
    if (changes.some((c) => c.entity_id === RESET_ALL)) return false;
    const read = this.db.prepare<[bigint], { embedding: Buffer }>('SELECT embedding FROM entity_embeddings WHERE rowid = ?');
    for (const id of new Set(changes.map((c) => c.entity_id))) {
      const row = read.get(BigInt(id));
      if (row === undefined) this.remove(id);
      else this.upsert(id, row.embedding);
    }
    this.seq = changes.at(-1)?.seq ?? latest;
    return changes.length < limit ? true : 'more';
  }

  /** The log since the cache's position, REPLAY_STEP entries a step; false when it must reload. */
  private *replayLog(): Generator<void, boolean> {
    for (;;) {
      const done = this.applyLog(REPLAY_STEP);
      if (done !== 'more') return done;
      yield;
    }
  }

  /** Fills rowOf from the ids read from the file, a slice a step; the first repeated or impossible id, if any. */
  private *indexRows(): Generator<void, number | undefined> {
    const { ids, rowOf } = this;
    for (let start = 0; start < this.count; start += INDEX_SLICE) {
      const end = Math.min(this.count, start + INDEX_SLICE);
      for (let row = start; row < end; row++) {
        const id = ids[row] as number;
        if (rowOf.has(id) || !Number.isSafeInteger(id)) return id;
        rowOf.set(id, row);
      }
      yield;
    }
    return undefined;
  }

  /**
   * Top-k by cosine distance: rows and query are unit length here, so it is 1 - dot. Exact below
   * QUANTIZE_FROM vectors; above, the candidates of the int8 scan (or of the sign codes' from
   * SIGN_FROM) are re-scored on float32, so distances are exact and recall is measured
   * (bench/latency/vector-leg.ts). `how` forces a scan and the signs' pool (benchmarks, tests).
   */
  search(
    query: Float32Array,
    k: number,
    how: {
      readonly scan?: 'float32' | 'int8' | 'signs';
      readonly pool?: number;
      readonly rerank?: number;
      readonly gather?: 'rows';
      readonly stages?: Record<string, number>;
    } = {},
  ): { id: number; distance: number }[] {
    const stages = how.stages;
    let mark = stages === undefined ? 0 : performance.now();
    const lap = (stage: string): void => {
      if (stages === undefined) return;
      const now = performance.now();
      stages[stage] = (stages[stage] ?? 0) + now - mark;
      mark = now;
    };
    const n = Math.min(k, this.count);
    if (n <= 0) return [];
    const dims = this.dims;
    const unit = normalize(Float32Array.from(query));
    // A memory grown by writes since its last load is centred again (the int8 scan answers meanwhile).
    if (this.signs !== undefined && this.count >= SIGN_FROM && !this.signsBuilding && this.centredOn * 2 < this.count)
      this.encodeSignsLater();
    if (this.count >= this.splitFrom && this.signs !== undefined) this.startHelper();
    const scan = how.scan ?? (this.count < QUANTIZE_FROM ? 'float32' : this.scansSigns ? 'signs' : 'int8');
    if (scan === 'float32') {
      const { keys, distances } = this.exactSearch(this.data.subarray(0, this.count * dims), unit, dims, n, 'ip', 1);
      const out: { id: number; distance: number }[] = [];
      for (let i = 0; i < keys.length; i++) {
        const row = Number(keys[i]);
        if (row < this.count) out.push({ id: this.ids[row] ?? 0, distance: distances[i] ?? 2 });
      }
      return out;
    }
    let rows: ArrayLike<number>;
    const pool = Math.min(this.count, Math.max(n * OVERSAMPLE, n + OVERSAMPLE_MIN));
    if (scan === 'signs' && this.signs !== undefined && this.signedRows >= this.count) {
      // The nearest by sign codes, then their int8 rows (copied together) scanned as below.
      const near = this.signs.nearest(
        unit,
        this.centre,
        this.count,
        Math.min(this.count, Math.max(pool, how.pool ?? Math.max(SIGN_POOL, n * SIGN_OVERSAMPLE))),
        stages === undefined ? undefined : lap,
      );
      // Narrowed by the estimate from the codes (unless `rerank` is 0), then the int8 scan of those rows, copied together.
      const chosen =
        how.rerank === 0
          ? near
          : this.signs.closest(
              unit,
              this.centre,
              near,
              Math.max(pool, how.rerank ?? Math.max(SIGN_RERANK, n * SIGN_RERANK_OVERSAMPLE)),
              stages === undefined ? undefined : lap,
            );
      lap('estimate');
      const gathered = how.gather === 'rows' || dims % 4 !== 0 ? this.gatherRows(chosen) : this.gatherWords(chosen);
      lap('gather');
      const { keys } = this.exactSearch(gathered, this.quantize(unit), dims, Math.min(pool, chosen.length), 'ip', 1);
      lap('int8 scan');
      rows = Array.from(keys, (key) => chosen[Number(key)] ?? this.count);
      lap('keys');
    } else {
      const { keys } = this.exactSearch(this.quantized.subarray(0, this.count * dims), this.quantize(unit), dims, pool, 'ip', 1);
      rows = Array.from(keys, Number);
      lap('int8 scan');
    }
    const data = this.data;
    touchRows(data, rows, dims, 16, this.count);
    lap('touch');
    const scored: { row: number; dot: number }[] = [];
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as number;
      if (row >= this.count) continue;
      let dot = 0;
      // Indexes are in range by construction; the casts keep this inner loop free of checks.
      for (let j = 0, o = row * dims; j < dims; j++, o++) dot += (data[o] as number) * (unit[j] as number);
      scored.push({ row, dot });
    }
    scored.sort((a, b) => b.dot - a.dot || a.row - b.row);
    const out = scored.slice(0, n).map((s) => ({ id: this.ids[s.row] ?? 0, distance: 1 - s.dot }));
    lap('re-score');
    return out;
  }

  /** The int8 rows of `rows`, copied together a row at a time (the path before gatherWords, kept for benchmarks and for lengths not a multiple of 4). */
  private gatherRows(rows: Uint32Array): Int8Array {
    const dims = this.dims;
    const gathered = new Int8Array(rows.length * dims);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as number;
      gathered.set(this.quantized.subarray(row * dims, (row + 1) * dims), i * dims);
    }
    return gathered;
  }

  private gathered = new Int32Array(0);
  /** The int8 rows of `rows` (dims a multiple of 4), copied together 4 bytes at a time into a buffer kept between searches (valid until the next). */
  private gatherWords(rows: Uint32Array): Int8Array {
    const dims = this.dims;
    const words = dims >> 2;
    const size = rows.length * words;
    if (this.gathered.length < size) this.gathered = new Int32Array(size);
    const out = this.gathered;
    const from = new Int32Array(this.quantized.buffer, this.quantized.byteOffset, this.quantized.length >> 2);
    touchRows(from, rows, words, 16, this.count);
    for (let i = 0, o = 0; i < rows.length; i++)
      for (let j = (rows[i] as number) * words, end = j + words; j < end; j++, o++) out[o] = from[j] as number;
    return new Int8Array(out.buffer, 0, size * 4);
  }

  reload(chunks = true): void {
    this.changes++;
    this.db
      .transaction(() => {
        const clear = (): void => {
          this.rowOf.clear();
          this.count = 0;
          this.signedRows = 0;
        };
        clear();
        this.seq = this.latestSeq();
        const total = chunks ? this.storedCount() : undefined;
        if (total !== undefined) this.grow(total);
        const complete = total !== undefined && run(this.readAllChunks());
        if (complete && this.count === total) {
          this.loadedFrom = 'chunks';
        } else {
          clear();
          for (const r of this.db
            .prepare<[], { id: number; embedding: Buffer }>('SELECT rowid AS id, embedding FROM entity_embeddings')
            .iterate()) {
            this.upsert(r.id, r.embedding, false);
          }
          this.loadedFrom = 'rows';
        }
        run(this.requantize());
        run(this.encodeSigns());
      })
      .deferred();
  }

  /**
   * The id of a row (of `samples`, spread over the cache) whose vector is not the table's, after
   * the same normalisation, or whose int8 copy is off by more than rounding; undefined when all match.
   */
  private differingRow(samples: number): number | undefined {
    const read = this.db.prepare<[bigint], { embedding: Buffer }>('SELECT embedding FROM entity_embeddings WHERE rowid = ?');
    const dims = this.dims;
    const step = Math.max(1, Math.floor(this.count / samples));
    for (let row = Math.floor(Math.random() * step); row < this.count; row += step) {
      const id = this.ids[row] as number;
      const bytes = read.get(BigInt(id))?.embedding;
      if (bytes?.byteLength !== dims * 4) return id;
      const stored = normalize(new Float32Array(Uint8Array.from(bytes).buffer));
      for (let j = 0, o = row * dims; j < dims; j++, o++) {
        const x = this.data[o] as number;
        if (Math.abs(x - (stored[j] as number)) > 1e-6) return id;
        if (Math.abs((this.quantized[o] as number) - quantizeOne(x, this.scale)) > 1) return id;
      }
    }
    return undefined;
  }

  /** Vectors in sqlite-vec 0.1's storage, or undefined when the storage is not that layout. */
  private storedCount(): number | undefined {
    try {
      return this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM entity_embeddings_rowids').get()?.n;
    } catch {
      return undefined;
    }
  }

  /** All chunks, a step at a time (a yield after each); false when one was not as expected. */
  private *readAllChunks(): Generator<void, boolean> {
    for (let after = 0; ;) {
      const last = this.readChunks(after, CHUNKS_PER_STEP);
      if (last === false) return false;
      if (last === undefined) return true;
      after = last;
      yield;
    }
  }

  /**
   * Reads sqlite-vec 0.1's storage directly: chunks of vectors with a validity bitmap and the rowid
   * of each slot. Iterating the vec0 table costs a virtual-table row per vector (45 s for 1M at a
   * cold start); the chunks are a few large blobs. Reads up to `limit` chunks after chunk `after`
   * and returns the last one read, undefined when there were none, false on any surprise (the
   * caller then reads through the table).
   */
  private readChunks(after: number, limit: number): number | undefined | false {
    const bytesPerVector = this.dims * 4;
    try {
      const rows = this.db
        .prepare<[number, number], { id: number; size: number; validity: Buffer; rowids: Buffer; vectors: Buffer }>(
          `SELECT c.chunk_id AS id, c.size, c.validity, c.rowids, v.vectors
             FROM entity_embeddings_chunks c JOIN entity_embeddings_vector_chunks00 v ON v.rowid = c.chunk_id
            WHERE c.chunk_id > ? ORDER BY c.chunk_id LIMIT ?`,
        )
        .all(after, limit);
      for (const c of rows) {
        if (c.vectors.byteLength < c.size * bytesPerVector || c.rowids.byteLength < c.size * 8 || c.validity.byteLength * 8 < c.size)
          return false;
        for (let slot = 0; slot < c.size; slot++) {
          if (((c.validity[slot >> 3] ?? 0) & (1 << (slot & 7))) === 0) continue;
          const id = Number(c.rowids.readBigInt64LE(slot * 8));
          this.upsert(id, c.vectors.subarray(slot * bytesPerVector, (slot + 1) * bytesPerVector), false);
        }
      }
      return rows.at(-1)?.id;
    } catch {
      return false;
    }
  }

  private latestSeq(): number {
    return this.latest.get()?.seq ?? 0;
  }

  /** Picks the scale from the largest component held and quantizes every row with it, yielding between slices. */
  private *requantize(): Generator<void, void> {
    const used = this.data.subarray(0, this.count * this.dims);
    let max = 0;
    for (let start = 0; start < used.length; start += SLICE) {
      const end = Math.min(used.length, start + SLICE);
      for (let i = start; i < end; i++) {
        const x = used[i] as number;
        if (x > max) max = x;
        else if (-x > max) max = -x;
      }
      yield;
    }
    const scale = (this.scale = 127 / (max > 0 ? max : 0.5));
    this.changes++;
    const quantized = this.quantized;
    for (let start = 0; start < used.length; start += SLICE) {
      const end = Math.min(used.length, start + SLICE);
      // |x × scale| <= 127 here, so rounding half away from zero needs no clamp.
      for (let i = start; i < end; i++) {
        const y = (used[i] as number) * scale;
        quantized[i] = (y >= 0 ? y + 0.5 : y - 0.5) | 0;
      }
      yield;
    }
  }

  /**
   * Sets the centre to the mean of the vectors, then encodes every row's sign code a slice a step
   * (searches scan int8 until the last row is encoded). A later build stops this one.
   */
  private *encodeSigns(): Generator<void, void> {
    const signs = this.signs;
    if (signs === undefined) return;
    const build = ++this.signBuild;
    this.signedRows = 0;
    this.signsBuilding = true;
    const dims = this.dims;
    const sum = new Float64Array(dims);
    let summed = 0;
    for (let start = 0; start < this.count; start += SIGN_SLICE) {
      const end = Math.min(this.count, start + SIGN_SLICE);
      const data = this.data;
      for (let o = start * dims; o < end * dims; o += dims)
        for (let j = 0; j < dims; j++) sum[j] = (sum[j] as number) + (data[o + j] as number);
      summed += end - start;
      yield;
      if (build !== this.signBuild) return;
    }
    for (let j = 0; j < dims; j++) this.centre[j] = summed > 0 ? (sum[j] as number) / summed : 0;
    this.centredOn = summed;
    while (this.signedRows < this.count) {
      const end = Math.min(this.count, this.signedRows + SIGN_SLICE);
      // Read after every yield: a write may have grown the arrays (and the codes) meanwhile.
      const codes = this.signs as SignCodes;
      for (let row = this.signedRows; row < end; row++) codes.encode(row, this.data, this.centre, row * dims);
      this.signedRows = end;
      yield;
      if (build !== this.signBuild) return;
    }
    this.signsBuilding = false;
  }

  /** The same, with the event loop free between slices; searches scan int8 meanwhile. */
  private encodeSignsLater(): void {
    void runYielding(this.encodeSigns());
  }

  private quantize(v: Float32Array): Int8Array {
    return Int8Array.from(v, (x) => quantizeOne(x, this.scale));
  }

  /** `quantize` false while reloading: the rows are quantized once the scale is known. */
  private upsert(id: number, bytes: Buffer, quantize = true): void {
    if (bytes.byteLength !== this.dims * 4) return; // written for another size; a reload follows the reset
    this.changes++;
    let row = this.rowOf.get(id);
    if (row === undefined) {
      row = this.count++;
      this.grow(this.count);
      this.rowOf.set(id, row);
      this.ids[row] = id;
    }
    new Uint8Array(this.data.buffer, row * this.dims * 4, this.dims * 4).set(bytes);
    const vector = normalize(this.data.subarray(row * this.dims, (row + 1) * this.dims));
    // A component past the scale's range is clamped; the float32 re-scoring keeps distances exact.
    if (quantize) this.quantized.set(this.quantize(vector), row * this.dims);
    if (!quantize || this.signs === undefined) return;
    if (row < this.signedRows) this.signs.encode(row, this.data, this.centre, row * this.dims);
    else if (row === this.signedRows && !this.signsBuilding) this.signs.encode(this.signedRows++, this.data, this.centre, row * this.dims);
  }

  private remove(id: number): void {
    const row = this.rowOf.get(id);
    if (row === undefined) return;
    this.changes++;
    const last = --this.count;
    if (row !== last) {
      this.data.copyWithin(row * this.dims, last * this.dims, (last + 1) * this.dims);
      this.quantized.copyWithin(row * this.dims, last * this.dims, (last + 1) * this.dims);
      const moved = this.ids[last] ?? 0;
      this.ids[row] = moved;
      this.rowOf.set(moved, row);
      if (row < this.signedRows) {
        if (last < this.signedRows) this.signs?.move(last, row);
        else this.signs?.encode(row, this.data, this.centre, row * this.dims);
      }
    }
    this.signedRows = Math.min(this.signedRows, this.count);
    this.rowOf.delete(id);
  }

  private grow(rows: number): void {
    if (rows <= this.ids.length) return;
    this.changes++;
    const capacity = Math.max(rows, Math.ceil(this.ids.length * 1.5));
    const data = new Float32Array(capacity * this.dims);
    data.set(this.data);
    const quantized = new Int8Array(capacity * this.dims);
    quantized.set(this.quantized);
    this.quantized = quantized;
    const ids = new Float64Array(capacity);
    ids.set(this.ids);
    this.data = data;
    this.ids = ids;
    this.signs = this.signs?.grown(capacity, this.signedRows);
  }
}

/**
 * Reads one element of every cache line of the given rows (`width` elements each, `perLine` to a
 * line), in a loop with nothing else in it, so that the processor has many of those misses under
 * way at once; the loop that then reads the rows finds them in cache. Rows scattered over a large
 * array otherwise cost a cache and TLB miss each, one after the other (half the time of the
 * search at 1M vectors before this). Rows at or past `count` are skipped.
 */
function touchRows(array: { readonly [i: number]: number }, rows: ArrayLike<number>, width: number, perLine: number, count: number): void {
  let sink = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as number;
    if (row >= count) continue;
    for (let j = row * width, end = j + width; j < end; j += perLine) sink += array[j] as number;
  }
  touched = sink;
}
/** Where touchRows leaves its sum, so that its reads are not optimised away. */
let touched = 0;
/** The last sum touchRows made (read by nobody; kept so that the reads count). */
export const lastTouched = (): number => touched;

/** Chunks of 1,024 vectors read per step of a background load. */
const CHUNKS_PER_STEP = 16;
/** Log entries replayed per step after a load from the file (each a point read of sqlite-vec, ~0.1 ms). */
const REPLAY_STEP = 512;
/** Ids indexed per step after a load from the file. */
const INDEX_SLICE = 1 << 16;
/** Rows whose sign codes are built between two turns of the event loop. */
const SIGN_SLICE = 1 << 13;
/** Components handled between two turns of the event loop while quantizing in the background. */
const SLICE = 1 << 22;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs a stepwise job to the end at once. */
function run<T>(job: Generator<void, T>): T {
  for (;;) {
    const step = job.next();
    if (step.done === true) return step.value;
  }
}

/** Runs a stepwise job with the event loop free between steps. */
async function runYielding<T>(job: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = job.next();
    if (step.done === true) return step.value;
    await nextTurn();
  }
}

const quantizeOne = (x: number, scale: number): number => Math.max(-127, Math.min(127, Math.round(x * scale)));

/** Scales a vector to unit length in place (a zero vector stays zero). */
function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) ** 2;
  const norm = Math.sqrt(sum);
  if (norm > 0 && Math.abs(norm - 1) > 1e-6) for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm;
  return v;
}

/** The mark (logMark) of the vector_log row at `seq`, undefined when the row is gone. */
function markAt(db: Database.Database, seq: number): number | undefined {
  const row = db.prepare<[number], { entity_id: number; nonce: number }>('SELECT entity_id, nonce FROM vector_log WHERE seq = ?').get(seq);
  return row === undefined ? undefined : logMark(row.entity_id, row.nonce);
}
