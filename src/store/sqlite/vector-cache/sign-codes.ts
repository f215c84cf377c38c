/**
 * Sign codes: one bit per dimension of a vector minus the set's mean (48 bytes for e5's 384
 * dimensions, an eighth of the int8 copy), compared by Hamming distance, which tracks the angle
 * between the centred vectors. The vector cache scans them first on large memories and re-scores
 * the closest few thousand exactly (vector-cache.ts), because reading 1M int8 vectors costs about
 * 17 ms on this machine's memory bandwidth and reading 1M sign codes a few.
 *
 * The Hamming distance sees only the signs of the query; the nearest few thousand by it are then
 * narrowed by an estimate of the dot product made from the same bits with the query's values
 * (`closest`), which ranks close enough to the exact order that only a few thousand rows need the
 * int8 scan (at 1M, copying 16,384 scattered int8 rows took as long as the whole Hamming scan).
 *
 * The kernel is a small WebAssembly SIMD module (XOR, popcount, selection, the estimate's table
 * lookups), assembled below from its opcodes: usearch's exactSearch takes float and int8 queries
 * only (a binary dataset gives NaN distances), JavaScript has no popcount, and no npm package
 * scans binary codes one-to-many (DEPENDENCIES.md). The codes live in the kernel's memory,
 * followed by two floats a row for the estimate, the distances of the last scan, the rows it
 * selected, their estimates and the query's table; the first page holds the query code and a
 * histogram of distances, from which the selection's threshold is read without sorting.
 */

import type { ScanHelper } from './scan-helper.js';

/** Bytes of one code: dimensions rounded up to whole 128-bit words, the padding zero. */
export const codeBytes = (dims: number): number => Math.ceil(dims / 128) * 16;

/** The kernel keeps byte counts per code in 8-bit lanes: up to 31 words (3,968 dimensions). */
export const MAX_CODE_DIMS = 31 * 128;

const PAGE = 65_536;
/** Rows estimated per call of the kernel: their codes and factors (two cache lines a row) fit the L1 cache. */
const ESTIMATE_STEP = 256;
/** Query code at 0, the histogram (u32 per distance) after it, the helper's (scan-helper.ts) at 32 KB. */
const QUERY_AT = 0;
const HIST_AT = 512;
const HIST2_AT = 32_768;

/**
 * The module, in the order of the binary format (https://webassembly.github.io/spec/core/binary/).
 *   scan(codes, n, query, out, hist): out[i] (u16) = Hamming(code i, query); hist[d] += 1, for codes of `words` 16-byte words
 *   select(dist, n, t, rem, dst) -> count: rows with distance < t, then the first `rem` at t, as u32
 */
function moduleBytes(words: number, shared: boolean): Uint8Array {
  const uleb = (n: number): number[] => {
    const out: number[] = [];
    do {
      let byte = n & 0x7f;
      n >>>= 7;
      if (n !== 0) byte |= 0x80;
      out.push(byte);
    } while (n !== 0);
    return out;
  };
  const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
  const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
  const name = (s: string): number[] => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
  const I32 = 0x7f;
  const V128 = 0x7b;
  // Instructions.
  const get = (i: number): number[] => [0x20, i];
  const set = (i: number): number[] => [0x21, i];
  const tee = (i: number): number[] => [0x22, i];
  const i32 = (n: number): number[] => {
    // Signed LEB128 of a non-negative constant.
    const out: number[] = [];
    for (;;) {
      const byte = n & 0x7f;
      n >>>= 7;
      if (n === 0 && (byte & 0x40) === 0) return [0x41, ...out, byte];
      out.push(byte | 0x80);
    }
  };
  const [add, sub, mul, shl, eqz, ltU, eq] = [[0x6a], [0x6b], [0x6c], [0x74], [0x45], [0x49], [0x46]];
  const load = [0x28, 2, 0];
  const load16 = [0x2f, 1, 0];
  const store = [0x36, 2, 0];
  const store16 = [0x3b, 1, 0];
  const simd = (op: number, ...imm: number[]): number[] => [0xfd, ...uleb(op), ...imm];
  const [xor, popcnt, add8] = [simd(0x51), simd(0x62), simd(0x6e)];
  const [pairs8, pairs16, add32x4] = [simd(0x7d), simd(0x7f), simd(0xae)];
  const lane = (l: number): number[] => simd(0x1b, l);
  const [block, loop, ifThen, els, end, brIf] = [[0x02, 0x40], [0x03, 0x40], [0x04, 0x40], [0x05], [0x0b], (d: number) => [0x0d, d]];

  // scan: params codes 0, n 1, query 2, out 3, hist 4; locals end 5, d 6 (i32), acc 7, the query's words 8.. (v128).
  // One row: the words XORed with the query's (held in locals), popcounts added per byte, summed.
  const [codes, n, query, out, hist, endAt, d, acc] = [0, 1, 2, 3, 4, 5, 6, 7];
  const qw = (k: number): number => 8 + k;
  const word = (k: number): number[] => [...get(codes), ...simd(0x00, 0, ...uleb(16 * k)), ...get(qw(k)), ...xor, ...popcnt];
  const rowBody: number[] = [...word(0)];
  for (let k = 1; k < words; k++) rowBody.push(...word(k), ...add8);
  // Bytes 8-15 onto 0-7, then lanes 0 and 1 of the 32-bit sums.
  const swapHalves = simd(0x0d, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  const scan = [
    ...vec([
      [2, I32],
      [1 + words, V128],
    ]),
    ...block,
    ...get(n),
    ...eqz,
    ...brIf(0),
    ...Array.from({ length: words }, (_, k) => [...get(query), ...simd(0x00, 0, ...uleb(16 * k)), ...set(qw(k))]).flat(),
    ...get(codes),
    ...get(n),
    ...i32(words * 16),
    ...mul,
    ...add,
    ...set(endAt),
    ...loop,
    ...rowBody,
    ...pairs8,
    ...pairs16,
    ...tee(acc),
    ...get(acc),
    ...get(acc),
    ...swapHalves,
    ...add32x4,
    ...tee(acc),
    ...lane(0),
    ...get(acc),
    ...lane(1),
    ...add,
    ...set(d),
    ...get(out),
    ...get(d),
    ...store16,
    ...get(hist),
    ...get(d),
    ...i32(2),
    ...shl,
    ...add,
    ...get(hist),
    ...get(d),
    ...i32(2),
    ...shl,
    ...add,
    ...load,
    ...i32(1),
    ...add,
    ...store,
    ...get(out),
    ...i32(2),
    ...add,
    ...set(out),
    ...get(codes),
    ...i32(words * 16),
    ...add,
    ...tee(codes),
    ...get(endAt),
    ...ltU,
    ...brIf(0),
    ...end,
    ...end,
    ...end,
  ];
  // select: params dist 0, n 1, t 2, rem 3, dst 4; locals i 5, dd 6, c 7, tv 8 (v128), g 9.
  // Eight distances at a time are compared with t at once; a group with none at or below it (nearly
  // all of them) is skipped, the others are taken row by row.
  const [dist, sn, t, rem, dst, si, dd, c, tv, g] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const take = [...get(dst), ...get(c), ...i32(2), ...shl, ...add, ...get(si), ...store, ...get(c), ...i32(1), ...add, ...set(c)];
  const [leU16, anyTrue, splat16, gtU, pick] = [simd(0x34), simd(0x53), simd(0x10), [0x4b], [0x1b]];
  const select = [
    ...vec([
      [3, I32],
      [1, V128],
      [1, I32],
    ]),
    ...block,
    ...get(sn),
    ...eqz,
    ...brIf(0),
    ...get(t),
    ...splat16,
    ...set(tv),
    ...loop,
    ...get(dist),
    ...get(si),
    ...i32(1),
    ...shl,
    ...add,
    ...simd(0x00, 0, 0),
    ...get(tv),
    ...leU16,
    ...anyTrue,
    ...ifThen,
    // g = min(i + 8, n)
    ...get(si),
    ...i32(8),
    ...add,
    ...get(sn),
    ...get(si),
    ...i32(8),
    ...add,
    ...get(sn),
    ...gtU,
    ...pick,
    ...set(g),
    ...loop,
    ...get(dist),
    ...get(si),
    ...i32(1),
    ...shl,
    ...add,
    ...load16,
    ...set(dd),
    ...get(dd),
    ...get(t),
    ...ltU,
    ...ifThen,
    ...take,
    ...els,
    ...get(dd),
    ...get(t),
    ...eq,
    ...ifThen,
    ...get(rem),
    ...ifThen,
    ...take,
    ...get(rem),
    ...i32(1),
    ...sub,
    ...set(rem),
    ...end,
    ...end,
    ...end,
    ...get(si),
    ...i32(1),
    ...add,
    ...tee(si),
    ...get(g),
    ...ltU,
    ...brIf(0),
    ...end,
    ...els,
    ...get(si),
    ...i32(8),
    ...add,
    ...set(si),
    ...end,
    ...get(si),
    ...get(sn),
    ...ltU,
    ...brIf(0),
    ...end,
    ...end,
    ...get(c),
    ...end,
  ];
  // estimate: params codes 0, rows 1, count 2, lut 3, factors 4, out 5; locals end 6, p 7, row 8.
  // out[i] (f32) = factors[2 row] × Σ_b lut[b][code(row)[b]] + factors[2 row + 1] for row = rows[i]:
  // the centred query's dot with the row's ±1 signs, scaled by the row's factor and offset by its
  // centre term (`encode`), from one table of 256 sums per code byte.
  const [eCodes, eRows, eCount, lut, factors, eOut, eEnd, p, row] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const f32Load = (offset: number): number[] => [0x2a, 2, ...uleb(offset)];
  const [f32Add, f32Mul] = [[0x92], [0x94]];
  // Four sums (bytes 0, 4, 8, ...; 1, 5, 9, ...; ...) added at the end, so the additions do not wait on each other.
  const sumBody: number[] = [];
  for (let chain = 0; chain < 4; chain++) {
    for (let b = chain; b < words * 16; b += 4) {
      sumBody.push(...get(lut), ...get(p), 0x2d, 0, ...uleb(b), ...i32(2), ...shl, ...add, ...f32Load(b * 1024));
      if (b > chain) sumBody.push(...f32Add);
    }
    if (chain > 0) sumBody.push(...f32Add);
  }
  const estimate = [
    ...vec([[3, I32]]),
    ...block,
    ...get(eCount),
    ...eqz,
    ...brIf(0),
    ...get(eRows),
    ...get(eCount),
    ...i32(2),
    ...shl,
    ...add,
    ...set(eEnd),
    ...loop,
    ...get(eRows),
    ...load,
    ...set(row),
    ...get(eCodes),
    ...get(row),
    ...i32(words * 16),
    ...mul,
    ...add,
    ...set(p),
    ...get(eOut),
    ...sumBody,
    ...get(factors),
    ...get(row),
    ...i32(3),
    ...shl,
    ...add,
    ...tee(p),
    ...f32Load(0),
    ...f32Mul,
    ...get(p),
    ...f32Load(4),
    ...f32Add,
    0x38,
    2,
    0,
    ...get(eOut),
    ...i32(4),
    ...add,
    ...set(eOut),
    ...get(eRows),
    ...i32(4),
    ...add,
    ...tee(eRows),
    ...get(eEnd),
    ...ltU,
    ...brIf(0),
    ...end,
    ...end,
    ...end,
  ];
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(
      1,
      vec([
        [0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0],
        [0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), ...vec([[I32]])],
        [0x60, ...vec([[I32], [I32], [I32], [I32], [I32], [I32]]), 0],
      ]),
    ),
    // The memory, imported: at least a page; shared (a maximum then required) when a second thread scans too.
    ...section(2, vec([[...name('e'), ...name('m'), 0x02, ...(shared ? [0x03, 0x01, ...uleb(65_536)] : [0x00, 0x01])]])),
    ...section(3, vec([[0], [1], [2]])),
    ...section(
      7,
      vec([
        [...name('scan'), 0x00, 0],
        [...name('select'), 0x00, 1],
        [...name('estimate'), 0x00, 2],
      ]),
    ),
    ...section(
      10,
      vec([
        [...uleb(scan.length), ...scan],
        [...uleb(select.length), ...select],
        [...uleb(estimate.length), ...estimate],
      ]),
    ),
  ];
  return Uint8Array.from(bytes);
}

/** The part of the WebAssembly API used here (the project's TypeScript libraries do not declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => { readonly buffer: ArrayBuffer };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** Compiled modules by code words (negative: on a shared memory). */
const compiled = new Map<number, object>();
const moduleFor = (words: number, shared = false): object => {
  const key = shared ? -words : words;
  let module = compiled.get(key);
  if (module === undefined) compiled.set(key, (module = new wasm.Module(moduleBytes(words, shared))));
  return module;
};

/** Whether this runtime runs the kernel (WebAssembly SIMD: Node 16.4 and later). */
export function signCodesSupported(): boolean {
  try {
    moduleFor(3);
    return true;
  } catch {
    return false;
  }
}

interface Kernel {
  scan(codes: number, n: number, query: number, out: number, hist: number): void;
  select(dist: number, n: number, t: number, rem: number, dst: number): number;
  estimate(codes: number, rows: number, count: number, lut: number, factors: number, out: number): void;
}

/**
 * Sign codes of up to `capacity` rows with the kernel's memory laid out for them. Rows are set by
 * `encode` (the vector minus the centre); `nearest` returns the rows of the `want` smallest
 * Hamming distances to a query (ties at the cut broken by row order), and `closest` narrows those
 * to the ones whose estimated dot product with the query is largest; both as views valid until
 * the next call.
 */
export class SignCodes {
  readonly bytes: number;
  private readonly words: number;
  private readonly memory: { readonly buffer: ArrayBuffer };
  private readonly kernel: Kernel;
  private readonly codesAt = PAGE;
  private readonly factorsAt: number;
  private readonly distAt: number;
  private readonly pickedAt: number;
  private readonly scoresAt: number;
  private readonly lutAt: number;
  /** The codes, in the kernel's memory. */
  readonly codes: Uint8Array;
  /**
   * Per row, |v - c|² / Σ|v_j - c_j| (what turns the centred query's dot with the row's signs into
   * an estimate of its dot with v - c), then c·(v - c): q·v = q·c + (q - c)·(v - c) + c·(v - c).
   */
  readonly factors: Float32Array;
  private readonly hist: Uint32Array;
  /** The helper's histogram (the first page's second half). */
  private readonly hist2: Uint32Array;
  private readonly picked: Uint32Array;
  private readonly scores: Float32Array;
  private readonly lut: Float32Array;
  /** Scratch of the selection (grown on demand, kept between searches). */
  private scratch = new Float32Array(0);
  /** Where `closest` leaves the sum of its first reads, so that they are not optimised away. */
  sink = 0;
  /** Scans whose second half the helper made. */
  splits = 0;

  /**
   * `helper`: a second thread (scan-helper.ts) that scans half the codes of a scan of at least
   * `splitFrom` rows; the kernel's memory is then shared with it.
   */
  constructor(
    readonly dims: number,
    readonly capacity: number,
    readonly helper?: ScanHelper,
    readonly splitFrom = 0,
  ) {
    if (dims > MAX_CODE_DIMS) throw new RangeError(`sign codes hold up to ${MAX_CODE_DIMS} dimensions, not ${dims}`);
    this.bytes = codeBytes(dims);
    this.words = this.bytes / 16;
    this.factorsAt = this.codesAt + capacity * this.bytes;
    this.distAt = this.factorsAt + capacity * 8;
    this.pickedAt = this.distAt + ((capacity * 2 + 3) & ~3);
    this.scoresAt = this.pickedAt + capacity * 4;
    this.lutAt = this.scoresAt + capacity * 4;
    const total = this.lutAt + this.bytes * 256 * 4;
    const pages = Math.ceil(total / PAGE);
    const shared = helper !== undefined;
    this.memory = new wasm.Memory(shared ? { initial: pages, maximum: pages, shared } : { initial: pages });
    this.kernel = new wasm.Instance(moduleFor(this.words, shared), { e: { m: this.memory } }).exports as unknown as Kernel;
    if (shared) helper.attach(this.memory, new Map([[this.words, moduleFor(this.words, true)]]));
    const buffer = this.memory.buffer;
    this.codes = new Uint8Array(buffer, this.codesAt, capacity * this.bytes);
    this.factors = new Float32Array(buffer, this.factorsAt, capacity * 2);
    this.hist = new Uint32Array(buffer, HIST_AT, dims + 1);
    this.hist2 = new Uint32Array(buffer, HIST2_AT, dims + 1);
    this.picked = new Uint32Array(buffer, this.pickedAt, capacity);
    this.scores = new Float32Array(buffer, this.scoresAt, capacity);
    this.lut = new Float32Array(buffer, this.lutAt, this.bytes * 256);
  }

  /** Writes the code of `vector - centre` at `row` (a bit is set where the component is above the centre's), and its factor. */
  encode(row: number, vector: Float32Array, centre: Float32Array, at = 0): void {
    writeCode(this.codes, row * this.bytes, vector, centre, this.dims, at);
    let squares = 0;
    let sum = 0;
    let onCentre = 0;
    for (let j = 0; j < this.dims; j++) {
      const c = centre[j] as number;
      const x = (vector[at + j] as number) - c;
      squares += x * x;
      sum += Math.abs(x);
      onCentre += c * x;
    }
    this.factors[2 * row] = sum > 0 ? squares / sum : 0;
    this.factors[2 * row + 1] = onCentre;
  }

  /** Codes for `capacity` rows holding this one's first `rows`, scanned with `share`'s helper (this one's unless given). */
  grown(capacity: number, rows: number, share: { readonly helper?: ScanHelper; readonly splitFrom: number } = this): SignCodes {
    const next = new SignCodes(this.dims, capacity, share.helper, share.splitFrom);
    next.codes.set(this.codes.subarray(0, rows * this.bytes));
    next.factors.set(this.factors.subarray(0, 2 * rows));
    next.splits = this.splits;
    return next;
  }

  /** Copies the code of row `from` to row `to` (a delete moves the last row into the hole). */
  move(from: number, to: number): void {
    this.codes.copyWithin(to * this.bytes, from * this.bytes, (from + 1) * this.bytes);
    this.factors.copyWithin(2 * to, 2 * from, 2 * from + 2);
  }

  /** The `want` rows (of the first `count`) nearest the query's code by Hamming distance, in row order. */
  nearest(query: Float32Array, centre: Float32Array, count: number, want: number, lap?: (stage: string) => void): Uint32Array {
    const queryCode = new Uint8Array(this.memory.buffer, QUERY_AT, this.bytes);
    queryCode.fill(0);
    writeCode(queryCode, 0, query, centre, this.dims, 0);
    this.hist.fill(0);
    lap?.('query code');
    // With a helper, it scans the second half (into its own histogram) while this thread scans the first.
    const { helper, kernel, codesAt, distAt, bytes } = this;
    const half = helper !== undefined && count >= this.splitFrom ? (count >> 1) & ~7 : 0;
    let split = false;
    if (half > 0) {
      this.hist2.fill(0);
      split = helper?.start(this.memory, this.words, codesAt + half * bytes, count - half, QUERY_AT, distAt + 2 * half, HIST2_AT) === true;
    }
    kernel.scan(codesAt, split ? half : count, QUERY_AT, distAt, HIST_AT);
    if (split) {
      // Should the helper fail, this thread scans its half after all (its histogram counted on the first).
      if (helper?.finish() === true) {
        for (let d = 0; d <= this.dims; d++) this.hist[d] = (this.hist[d] as number) + (this.hist2[d] as number);
        this.splits++;
      } else kernel.scan(codesAt + half * bytes, count - half, QUERY_AT, distAt + 2 * half, HIST_AT);
    }
    lap?.('hamming scan');
    // The smallest distance t whose cumulative count reaches `want`: every row below t is taken, and the first at t.
    let below = 0;
    let t = 0;
    while (t < this.dims && below + (this.hist[t] as number) < want) below += this.hist[t++] as number;
    const picked = kernel.select(this.distAt, count, t, want - below, this.pickedAt);
    lap?.('select');
    return this.picked.subarray(0, picked);
  }

  /**
   * Of the rows `nearest` returned last (`rows`, its view), the `want` whose estimated dot product
   * with the query is largest: the query's dot with the row's signs (±1) times the row's factor,
   * the 1-bit estimate of RaBitQ (Gao and Long, SIGMOD 2024) without its rotation. It ranks far
   * closer to the exact order than the Hamming distance, which sees only the query's signs. Ties
   * at the cut are broken by position. The rows come back in no particular order.
   */
  closest(query: Float32Array, centre: Float32Array, rows: Uint32Array, want: number, lap?: (stage: string) => void): Uint32Array {
    const count = rows.length;
    if (want >= count) return rows;
    const { lut, dims } = this;
    // lut[b][v]: Σ over the bits of byte v of ±(query - centre)[8b + bit] (+ where the bit is set); padding reads as 0.
    const q = (j: number): number => (j < dims ? (query[j] as number) - (centre[j] as number) : 0);
    for (let b = 0; b < this.bytes; b++) {
      const base = b * 256;
      let none = 0;
      for (let i = 0; i < 8; i++) none -= q(8 * b + i);
      lut[base] = none;
      for (let v = 1; v < 256; v++) {
        const low = v & -v;
        lut[base + v] = (lut[base + (v ^ low)] as number) + 2 * q(8 * b + (31 - Math.clz32(low)));
      }
    }
    lap?.('estimate: table');
    // A few hundred rows at a time: their codes and factors read first in a bare loop, so that
    // their misses overlap (vector-cache.ts, touchRows), then estimated while still in cache.
    const { codes, factors, bytes } = this;
    let sink = 0;
    for (let start = 0; start < count; start += ESTIMATE_STEP) {
      const end = Math.min(count, start + ESTIMATE_STEP);
      for (let i = start; i < end; i++) {
        const row = rows[i] as number;
        sink += (codes[row * bytes] as number) + (factors[2 * row] as number);
      }
      this.kernel.estimate(this.codesAt, rows.byteOffset + 4 * start, end - start, this.lutAt, this.factorsAt, this.scoresAt + 4 * start);
    }
    this.sink = sink;
    lap?.('estimate: kernel');
    const scores = this.scores;
    if (this.scratch.length < count) this.scratch = new Float32Array(count);
    const scratch = this.scratch.subarray(0, count);
    scratch.set(scores.subarray(0, count));
    const t = kthLargest(scratch, want);
    // Compacts the chosen rows to the front of the same view: those above t, then the first at t.
    let above = 0;
    for (let i = 0; i < count; i++) if ((scores[i] as number) > t) above++;
    let atCut = want - above;
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const s = scores[i] as number;
      if (s > t || (s === t && atCut-- > 0)) rows[kept++] = rows[i] as number;
    }
    return rows.subarray(0, kept);
  }
}

/** The `k`-th largest value of `xs` (1-based; reorders xs), by quickselect. */
function kthLargest(xs: Float32Array, k: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = xs[(lo + hi) >> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((xs[i] as number) > pivot) i++;
      while ((xs[j] as number) < pivot) j--;
      if (i <= j) {
        const tmp = xs[i] as number;
        xs[i++] = xs[j] as number;
        xs[j--] = tmp;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return xs[target] as number;
  }
  return xs[target] as number;
}

function writeCode(out: Uint8Array, offset: number, vector: Float32Array, centre: Float32Array, dims: number, at: number): void {
  for (let byte = 0; byte * 8 < dims; byte++) {
    let bits = 0;
    for (let b = 0; b < 8; b++) {
      const j = byte * 8 + b;
      if (j < dims && (vector[at + j] as number) > (centre[j] as number)) bits |= 1 << b;
    }
    out[offset + byte] = bits;
  }
}
