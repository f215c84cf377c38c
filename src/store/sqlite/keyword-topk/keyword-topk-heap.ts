/** The pieces of the top-k keyword search (keyword-topk.ts) that know nothing of BM25. */

export interface TopKHit {
  readonly id: number;
  /** bm25() as FTS5 returns it: negative, lower is better. */
  readonly score: number;
}

/** The first position at or after `from` whose id is ≥ target (galloping, then binary search). */
export function seek(ids: Int32Array, from: number, target: number): number {
  let lo = from;
  if (lo >= ids.length || (ids[lo] as number) >= target) return lo;
  let step = 1;
  let hi = lo + 1;
  while (hi < ids.length && (ids[hi] as number) < target) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  hi = Math.min(hi, ids.length);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ids[mid] as number) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The k best (score higher, then id lower) seen so far; the root is the worst held. */
export class TopHeap {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number) {}

  /** The score an entity must beat (or tie with a lower id) to enter; -Infinity while not full. */
  threshold(): number {
    return this.ids.length < this.k ? -Infinity : (this.scores[0] as number);
  }

  /** True when the entity entered. */
  offer(id: number, score: number): boolean {
    if (this.ids.length < this.k) {
      this.ids.push(id);
      this.scores.push(score);
      this.up(this.ids.length - 1);
      return true;
    }
    if (!this.worse(0, score, id)) return false;
    this.ids[0] = id;
    this.scores[0] = score;
    this.down(0);
    return true;
  }

  sorted(): TopKHit[] {
    return this.ids
      .map((id, i) => ({ id, s: this.scores[i] as number }))
      .sort((a, b) => b.s - a.s || a.id - b.id)
      .map((h) => ({ id: h.id, score: -1.0 * h.s }));
  }

  /** Entry i ranks below (score, id). */
  private worse(i: number, score: number, id: number): boolean {
    const s = this.scores[i] as number;
    return s < score || (s === score && (this.ids[i] as number) > id);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, this.scores[parent] as number, this.ids[parent] as number)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < this.ids.length && this.worse(l, this.scores[worst] as number, this.ids[worst] as number)) worst = l;
      if (r < this.ids.length && this.worse(r, this.scores[worst] as number, this.ids[worst] as number)) worst = r;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b] as number, this.ids[a] as number];
    [this.scores[a], this.scores[b]] = [this.scores[b] as number, this.scores[a] as number];
  }
}
