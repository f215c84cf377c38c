/**
 * Sign codes: one bit per dimension of a vector minus the set's mean (48 bytes for e5's 384
 * dimensions, an eighth of the int8 copy), compared by Hamming distance, which tracks the angle
 * between the centred vectors. The vector cache scans them first on large memories and re-scores
 * the closest few thousand exactly (vector-cache.ts), because reading 1M int8 vectors costs about
 * 17 ms on this machine's memory bandwidth and reading 1M sign codes a few.
 *
 * The scan is a small WebAssembly SIMD kernel (XOR, popcount), assembled below from its opcodes:
 * usearch's exactSearch takes float and int8 queries only (a binary dataset gives NaN distances),
 * and JavaScript has no popcount. The codes live in the kernel's memory, followed by the
 * distances of the last scan and the rows it selected; the first page holds the query code and a
 * histogram of distances, from which the selection's threshold is read without sorting.
 */

/** Bytes of one code: dimensions rounded up to whole 128-bit words, the padding zero. */
export const codeBytes = (dims: number): number => Math.ceil(dims / 128) * 16;

/** The kernel keeps byte counts per code in 8-bit lanes: up to 31 words (3,968 dimensions). */
export const MAX_CODE_DIMS = 31 * 128;

const PAGE = 65_536;
/** Query code at 0, the histogram (u32 per distance) after it. */
const QUERY_AT = 0;
const HIST_AT = 512;

/**
 * The module, in the order of the binary format (https://webassembly.github.io/spec/core/binary/).
 *   scan(codes, n, query, out, hist): out[i] (u16) = Hamming(code i, query); hist[d] += 1, for codes of `words` 16-byte words
 *   select(dist, n, t, rem, dst) -> count: rows with distance < t, then the first `rem` at t, as u32
 */
function moduleBytes(words: number): Uint8Array {
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
  // select: params dist 0, n 1, t 2, rem 3, dst 4; locals i 5, dd 6, c 7.
  const [dist, sn, t, rem, dst, si, dd, c] = [0, 1, 2, 3, 4, 5, 6, 7];
  const take = [...get(dst), ...get(c), ...i32(2), ...shl, ...add, ...get(si), ...store, ...get(c), ...i32(1), ...add, ...set(c)];
  const select = [
    ...vec([[3, I32]]),
    ...block,
    ...get(sn),
    ...eqz,
    ...brIf(0),
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
    ...get(sn),
    ...ltU,
    ...brIf(0),
    ...end,
    ...end,
    ...get(c),
    ...end,
  ];
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(
      1,
      vec([
        [0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0],
        [0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), ...vec([[I32]])],
      ]),
    ),
    ...section(2, vec([[...name('e'), ...name('m'), 0x02, 0x00, 0x01]])),
    ...section(3, vec([[0], [1]])),
    ...section(
      7,
      vec([
        [...name('scan'), 0x00, 0],
        [...name('select'), 0x00, 1],
      ]),
    ),
    ...section(
      10,
      vec([
        [...uleb(scan.length), ...scan],
        [...uleb(select.length), ...select],
      ]),
    ),
  ];
  return Uint8Array.from(bytes);
}

/** The part of the WebAssembly API used here (the project's TypeScript libraries do not declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** Compiled modules by code words. */
const compiled = new Map<number, object>();
const moduleFor = (words: number): object => {
  let module = compiled.get(words);
  if (module === undefined) compiled.set(words, (module = new wasm.Module(moduleBytes(words))));
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
}

/**
 * Sign codes of up to `capacity` rows with the kernel's memory laid out for them. Rows are set by
 * `encode` (the vector minus the centre); `nearest` returns the rows of the `want` smallest
 * Hamming distances to a query (ties at the cut broken by row order), as a view valid until the
 * next call.
 */
export class SignCodes {
  readonly bytes: number;
  private readonly words: number;
  private readonly memory: { readonly buffer: ArrayBuffer };
  private readonly kernel: Kernel;
  private readonly codesAt = PAGE;
  private readonly distAt: number;
  private readonly pickedAt: number;
  /** The codes, in the kernel's memory. */
  readonly codes: Uint8Array;
  private readonly hist: Uint32Array;

  constructor(
    readonly dims: number,
    readonly capacity: number,
  ) {
    if (dims > MAX_CODE_DIMS) throw new RangeError(`sign codes hold up to ${MAX_CODE_DIMS} dimensions, not ${dims}`);
    this.bytes = codeBytes(dims);
    this.words = this.bytes / 16;
    this.distAt = this.codesAt + capacity * this.bytes;
    this.pickedAt = this.distAt + ((capacity * 2 + 3) & ~3);
    const total = this.pickedAt + capacity * 4;
    this.memory = new wasm.Memory({ initial: Math.ceil(total / PAGE) });
    this.kernel = new wasm.Instance(moduleFor(this.words), { e: { m: this.memory } }).exports as unknown as Kernel;
    this.codes = new Uint8Array(this.memory.buffer, this.codesAt, capacity * this.bytes);
    this.hist = new Uint32Array(this.memory.buffer, HIST_AT, dims + 1);
  }

  /** Writes the code of `vector - centre` at `row` (a bit is set where the component is above the centre's). */
  encode(row: number, vector: Float32Array, centre: Float32Array, at = 0): void {
    writeCode(this.codes, row * this.bytes, vector, centre, this.dims, at);
  }

  /** Codes for `capacity` rows holding this one's first `rows`. */
  grown(capacity: number, rows: number): SignCodes {
    const next = new SignCodes(this.dims, capacity);
    next.codes.set(this.codes.subarray(0, rows * this.bytes));
    return next;
  }

  /** Copies the code of row `from` to row `to` (a delete moves the last row into the hole). */
  move(from: number, to: number): void {
    this.codes.copyWithin(to * this.bytes, from * this.bytes, (from + 1) * this.bytes);
  }

  /** The `want` rows (of the first `count`) nearest the query's code by Hamming distance. */
  nearest(query: Float32Array, centre: Float32Array, count: number, want: number): Uint32Array {
    const queryCode = new Uint8Array(this.memory.buffer, QUERY_AT, this.bytes);
    queryCode.fill(0);
    writeCode(queryCode, 0, query, centre, this.dims, 0);
    this.hist.fill(0);
    this.kernel.scan(this.codesAt, count, QUERY_AT, this.distAt, HIST_AT);
    // The smallest distance t whose cumulative count reaches `want`: every row below t is taken, and the first at t.
    let below = 0;
    let t = 0;
    while (t < this.dims && below + (this.hist[t] as number) < want) below += this.hist[t++] as number;
    const picked = this.kernel.select(this.distAt, count, t, want - below, this.pickedAt);
    return new Uint32Array(this.memory.buffer, this.pickedAt, picked);
  }
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
