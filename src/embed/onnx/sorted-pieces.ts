/**
 * A tokenizer's vocabulary searched in sorted order, in place of the structures @huggingface/tokenizers
 * builds for it on load (unigram-vocab.ts says why). Pieces sorted by UTF-16 code units (as JS
 * compares strings) put every piece that starts with a given prefix in one run, the prefix itself
 * first when it is a piece: so the pieces that begin at a position of a text are found by
 * narrowing a range one character at a time (binary searches), and a piece's id by one binary
 * search. Nothing is built but the order, which the vocabulary file stores (unigram-vocab-file.ts).
 */

/** The ids of `pieces` in the order this module searches: by piece (code units), then by id. */
export function sortedOrder(pieces: readonly string[]): Int32Array {
  const order = Int32Array.from(pieces.keys());
  return order.sort((a, b) => {
    const pa = pieces[a] as string;
    const pb = pieces[b] as string;
    return pa < pb ? -1 : pa > pb ? 1 : a - b;
  });
}

/** Positions are below this, so a run packs into one number: the most pieces this search takes. */
export const RUN_LIMIT = 2 ** 22;

export class SortedPieces {
  /**
   * Where the run of each first code unit starts (and ends, at the next unit's start): the widest
   * searches, over the whole vocabulary, are one lookup. Pieces are scattered in memory, and a
   * binary search over 250,000 of them cost encoding twice what the library's trie did.
   */
  private readonly starts = new Int32Array(0x10001);
  /** Runs of two code units already searched: first * 0x10000 + second → lo * RUN_LIMIT + hi. */
  private readonly second = new Map<number, number>();
  /** Scratch [lo, hi) of a search (a search runs to its end before the next starts). */
  private readonly range = new Int32Array(2);

  /**
   * @param pieces by id, as the vocabulary was written (the caller must not change them)
   * @param order from sortedOrder(pieces)
   */
  constructor(
    private readonly pieces: readonly string[],
    private readonly order: Int32Array,
  ) {
    if (order.length >= RUN_LIMIT) throw new Error(`a vocabulary of ${order.length} pieces is over the ${RUN_LIMIT} this search handles`);
    let position = 0;
    for (let unit = 0; unit <= 0x10000; unit++) {
      while (position < order.length && this.unitAt(position, 0) < unit) position++;
      this.starts[unit] = position;
    }
  }

  /**
   * The pieces that begin at `start` of `chars` (code points, as the library's lattice holds them;
   * a string is read by code point), shortest first: what the library's CharTrie yields, in its
   * order, which decides between equal-scoring paths.
   */
  common_prefix_search(chars: readonly string[] | string, start = 0): string[] {
    const points = typeof chars === 'string' ? Array.from(chars) : chars;
    const found: string[] = [];
    const range = this.range;
    range[0] = 0;
    range[1] = this.order.length;
    let prefix = '';
    for (let i = start; i < points.length && range[0] < range[1]; i++) {
      const ch = points[i] as string;
      for (let k = 0; k < ch.length && range[0] < range[1]; k++) this.narrow(range, prefix.length + k, ch.charCodeAt(k));
      prefix += ch;
      // The run's first piece is the prefix itself when the prefix is a piece.
      if (range[0] < range[1] && this.pieceAt(range[0]).length === prefix.length) found.push(prefix);
    }
    return found;
  }

  /** The id the library's Map gives `piece` (the last of equal pieces), or undefined. */
  idOf(piece: string): number | undefined {
    const range = this.range;
    range[0] = 0;
    range[1] = this.order.length;
    for (let depth = 0; depth < piece.length && range[0] < range[1]; depth++) this.narrow(range, depth, piece.charCodeAt(depth));
    // Equal pieces sort first in the run, by id; longer ones follow.
    let last: number | undefined;
    for (let p = range[0] as number; p < (range[1] as number) && this.pieceAt(p).length === piece.length; p++) last = this.order[p];
    return last;
  }

  /** Every piece with its id, in id order. */
  *entries(): Generator<[string, number]> {
    for (let id = 0; id < this.pieces.length; id++) yield [this.pieces[id] as string, id];
  }

  /**
   * Narrows `range`, a run of pieces that share their first `depth` code units, to those whose
   * unit at `depth` is `unit`. The first two levels cover the widest runs (most pieces begin with
   * "\u2581"): a table for the first, remembered answers for the second.
   */
  private narrow(range: Int32Array, depth: number, unit: number): void {
    if (depth === 0) {
      range[0] = this.starts[unit] as number;
      range[1] = this.starts[unit + 1] as number;
      return;
    }
    const key = depth === 1 ? this.unitAt(range[0] as number, 0) * 0x10000 + unit : -1;
    const known = key < 0 ? undefined : this.second.get(key);
    if (known !== undefined) {
      range[0] = Math.floor(known / RUN_LIMIT);
      range[1] = known % RUN_LIMIT;
      return;
    }
    const lo = this.lowerBound(range[0] as number, range[1] as number, depth, unit);
    const hi = this.lowerBound(lo, range[1] as number, depth, unit + 1);
    range[0] = lo;
    range[1] = hi;
    if (key >= 0) this.second.set(key, lo * RUN_LIMIT + hi);
  }

  private pieceAt(position: number): string {
    return this.pieces[this.order[position] as number] as string;
  }

  /**
   * The first position in [lo, hi) whose piece's code unit at `depth` is at least `unit`; a piece
   * that ends before `depth` counts as below every unit. Within a run sharing the first `depth`
   * units, those units rise with the position.
   */
  private lowerBound(lo: number, hi: number, depth: number, unit: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.unitAt(mid, depth) < unit) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The code unit at `depth` of the piece at `position`, -1 past its end. */
  private unitAt(position: number, depth: number): number {
    const piece = this.pieceAt(position);
    return depth < piece.length ? piece.charCodeAt(depth) : -1;
  }
}

/**
 * The library's piece → id Map, answered by the sorted pieces: building a Map of 250,002 pieces
 * took ~100 ms of a start. The library reads it with get for each piece a search yields and each
 * token it returns; what it (or we) set, the added tokens, lives in the Map itself and wins, as
 * it would there. Any other use (iteration, size, delete) first builds the whole Map, in the
 * library's insertion order.
 */
export class PieceIds extends Map<string, number> {
  private whole = false;

  constructor(private readonly sorted: SortedPieces) {
    super();
  }

  override get(key: string): number | undefined {
    const set = super.get(key);
    return set !== undefined || this.whole ? set : this.sorted.idOf(key);
  }

  override has(key: string): boolean {
    return super.has(key) || (!this.whole && this.sorted.idOf(key) !== undefined);
  }

  override get size(): number {
    this.build();
    return super.size;
  }

  override delete(key: string): boolean {
    this.build();
    return super.delete(key);
  }

  override clear(): void {
    this.whole = true;
    super.clear();
  }

  override forEach(callback: (value: number, key: string, map: Map<string, number>) => void, thisArg?: unknown): void {
    this.build();
    super.forEach(callback, thisArg);
  }

  override entries(): MapIterator<[string, number]> {
    this.build();
    return super.entries();
  }

  override keys(): MapIterator<string> {
    this.build();
    return super.keys();
  }

  override values(): MapIterator<number> {
    this.build();
    return super.values();
  }

  override [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }

  private build(): void {
    if (this.whole) return;
    const set = [...super.entries()];
    super.clear();
    for (const [piece, id] of this.sorted.entries()) super.set(piece, id);
    for (const [key, id] of set) super.set(key, id);
    this.whole = true;
  }
}
