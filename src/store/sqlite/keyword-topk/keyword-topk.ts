/**
 * An in-memory keyword index that answers a plain OR query's best k without scoring every match.
 * FTS5 scores each entity an OR query matches (about 1 µs each) before it can sort; this index
 * keeps docid-sorted postings with each term's largest possible BM25 contribution and runs
 * MaxScore: once k entities are held, the terms whose bounds together cannot reach the k-th score
 * only confirm candidates found through the rarer terms, and are never walked.
 *
 * Scores are FTS5's bm25() exactly (fts5_aux.c): k1 1.2, b 0.75, one IDF per phrase of the query
 * (a word repeated, or two words with one stem, count twice as in FTS5), idf floored at 1e-6,
 * document length over all columns, and the row count and token total FTS5 itself keeps (its
 * averages record, which each commit keeps exact for deletes: fts5-totals.ts; the caller passes
 * them in). Each score is summed in phrase order as FTS5 sums it, so equal scores stay equal and ties
 * fall to the lower rowid, as `ORDER BY bm25, rowid` puts them.
 *
 * Changes go to a small delta (the changed entities' fresh terms) and mark the entity in the base
 * postings as stale; the delta is merged into the base once it holds DELTA_MERGE_SHARE of the
 * entities. Where the terms come from (FTS5's own tokenizer) is keyword-topk-sync.ts's concern.
 * (A little over 400 lines: search, update and merge share the postings' private layout.)
 */

import { TopHeap, seek, type TopKHit } from './keyword-topk-heap.js';

export type { TopKHit } from './keyword-topk-heap.js';

const K1 = 1.2;
const B = 0.75;
/** Bounds are compared with this slack, so a rounding difference never prunes a true top-k entity. */
const BOUND_SLACK = 1 + 1e-9;
/** Share of the entities changed (with at least DELTA_MERGE_MIN) before the delta is merged. */
const DELTA_MERGE_SHARE = 0.02;
const DELTA_MERGE_MIN = 2_000;
/** Terms or entities handled between two pauses of loadBase (16 times as many postings). */
const SLICE = 1 << 16;

/** Runs a stepwise piece of work to its end, without pausing. */
function runSteps(steps: Generator<void>): void {
  while (steps.next().done !== true);
}

/** FTS5's corpus statistics (its averages record): rows ever counted and tokens over all columns. */
export interface CorpusStats {
  readonly rows: number;
  readonly tokens: number;
}

/**
 * One term's base postings: entries start..start+n of the shared id and count arrays, ids
 * ascending. Shared arrays, not two per term: at 100k entities (300k terms) creating 600k small
 * typed arrays made a merge take 1.5 s and reading the file 0.8 s.
 */
interface Postings {
  start: number;
  n: number;
  /** The largest tf part of BM25 in the list, at the index's reference average length. */
  maxPart: number;
  /** Stale entries (entities changed since the merge), counted at `staleGen`. */
  stale: number;
  staleGen: number;
}

/** An entity's terms with their counts, and its length in tokens. */
export interface DocTerms {
  readonly terms: ReadonlyMap<string, number>;
  readonly length: number;
}

export class KeywordTopK {
  /** `mergeMin`: changed entities below which the delta is never merged (small in tests). */
  constructor(private readonly mergeMin = DELTA_MERGE_MIN) {}

  private base = new Map<string, Postings>();
  /** All base postings' entity ids and counts; `used` entries are filled. */
  private ids: Int32Array = new Int32Array(1024);
  private tfs: Uint16Array = new Uint16Array(1024);
  private used = 0;
  /** Length in tokens by entity id; -1 for none. */
  private lengths = new Int32Array(1024).fill(-1);
  /** 1 where the base postings hold an entity that changed since (the delta has its truth). */
  private stale = new Uint8Array(1024);
  private staleIds: number[] = [];
  private staleGen = 0;
  private readonly delta = new Map<number, DocTerms>();
  private readonly deltaTerms = new Map<string, Set<number>>();
  private live = 0;
  /**
   * The average length the bounds were computed at. The tf part grows with the average length
   * (the denominator's length term shrinks), by at most their ratio, so a search at a larger
   * average scales the bounds by it; at a smaller one they hold as they are.
   */
  private refAvgdl = 1;

  /** Entities held. */
  get size(): number {
    return this.live;
  }

  /**
   * Appends one term's base postings while building (ids ascending, each term once). Every
   * entity's length must be set (setBaseLength), then finishBase() called, before a search.
   */
  addBaseTerm(term: string, ids: ArrayLike<number>, tfs: ArrayLike<number>): void {
    const n = ids.length;
    if (this.used + n > this.ids.length) {
      let size = this.ids.length;
      while (size < this.used + n) size *= 2;
      const grown = new Int32Array(size);
      grown.set(this.ids.subarray(0, this.used));
      const grownTfs = new Uint16Array(size);
      grownTfs.set(this.tfs.subarray(0, this.used));
      this.ids = grown;
      this.tfs = grownTfs;
    }
    for (let i = 0; i < n; i++) {
      this.ids[this.used + i] = ids[i] as number;
      this.tfs[this.used + i] = Math.min(0xffff, tfs[i] as number);
    }
    this.base.set(term, { start: this.used, n, maxPart: 0, stale: 0, staleGen: 0 });
    this.used += n;
  }

  /** The whole base at once, from the file: `counts[i]` entries of ids and tfs per term, in order. */
  setBase(terms: readonly string[], counts: ArrayLike<number>, ids: Int32Array, tfs: Uint16Array): void {
    runSteps(this.setBaseSteps(terms, counts, ids, tfs));
  }

  /**
   * setBase, every setBaseLength and finishBase, with `pause()` awaited between slices of the work:
   * at 1M entities (1M terms, 60M postings) they took 1.5 s in one piece, every tool waiting
   * behind them. Only for an index nobody searches yet (a file being read).
   */
  async loadBase(
    terms: readonly string[],
    counts: ArrayLike<number>,
    ids: Int32Array,
    tfs: Uint16Array,
    lengths: Int32Array,
    pause: () => Promise<void>,
  ): Promise<void> {
    for (const _ of this.setBaseSteps(terms, counts, ids, tfs)) await pause();
    for (let id = 0; id < lengths.length; id++) {
      if ((lengths[id] as number) >= 0) this.setBaseLength(id, lengths[id] as number);
      if (id % SLICE === SLICE - 1) await pause();
    }
    for (const _ of this.finishBaseSteps()) await pause();
  }

  private *setBaseSteps(terms: readonly string[], counts: ArrayLike<number>, ids: Int32Array, tfs: Uint16Array): Generator<void> {
    this.ids = ids;
    this.tfs = tfs;
    this.base.clear();
    let start = 0;
    for (let i = 0; i < terms.length; i++) {
      const n = counts[i] as number;
      this.base.set(terms[i] as string, { start, n, maxPart: 0, stale: 0, staleGen: 0 });
      start += n;
      if (i % SLICE === SLICE - 1) yield;
    }
    this.used = start;
  }

  /** Sets an entity's length while building (the base postings must hold its terms). */
  setBaseLength(id: number, length: number): void {
    this.grow(id);
    if ((this.lengths[id] as number) < 0) this.live++;
    this.lengths[id] = length;
  }

  /** Computes each term's bound inputs; call once after the base is built. */
  finishBase(): void {
    runSteps(this.finishBaseSteps());
  }

  private *finishBaseSteps(): Generator<void> {
    if (this.ids.length > this.used * 1.125 + 1024) {
      // Built by doubling: up to half the capacity is unused.
      this.ids = this.ids.slice(0, this.used);
      this.tfs = this.tfs.slice(0, this.used);
    }
    this.setReference();
    let work = 0;
    for (const p of this.base.values()) {
      this.bound(p);
      work += p.n + 1;
      if (work >= 16 * SLICE) {
        work = 0;
        yield;
      }
    }
  }

  /** Hides an entity's base postings (read while it changed) until update() gives its terms. */
  hide(id: number): void {
    this.grow(id);
    if (this.stale[id] === 1) return;
    this.stale[id] = 1;
    this.staleIds.push(id);
    this.staleGen++;
  }

  /** An entity's new terms, or undefined when it is gone. */
  update(id: number, doc: DocTerms | undefined): void {
    this.grow(id);
    const old = this.delta.get(id);
    if (old !== undefined) {
      for (const term of old.terms.keys()) {
        const set = this.deltaTerms.get(term);
        set?.delete(id);
        if (set?.size === 0) this.deltaTerms.delete(term);
      }
      this.delta.delete(id);
    } else if (this.stale[id] === 0 && (this.lengths[id] as number) >= 0) {
      // Still in the base as it was: hidden there from now on.
      this.stale[id] = 1;
      this.staleIds.push(id);
      this.staleGen++;
    }
    const wasLive = (this.lengths[id] as number) >= 0;
    if (doc === undefined) {
      this.lengths[id] = -1;
      if (wasLive) this.live--;
    } else {
      this.lengths[id] = doc.length;
      if (!wasLive) this.live++;
      this.delta.set(id, doc);
      for (const term of doc.terms.keys()) {
        let set = this.deltaTerms.get(term);
        if (set === undefined) this.deltaTerms.set(term, (set = new Set()));
        set.add(id);
      }
    }
    if (this.delta.size + this.staleIds.length > Math.max(this.mergeMin, this.live * DELTA_MERGE_SHARE)) this.merge();
  }

  /** Entities holding the term, as FTS5 counts them for idf. */
  docFrequency(term: string): number {
    const p = this.base.get(term);
    return (p === undefined ? 0 : p.n - this.staleIn(p)) + (this.deltaTerms.get(term)?.size ?? 0);
  }

  /**
   * The best `k` entities for an OR of single-term phrases (`phrases`: each phrase's term, in the
   * query's order, repeats kept), best first, ties by lower id.
   */
  search(phrases: readonly string[], k: number, corpus: CorpusStats): TopKHit[] {
    if (k <= 0 || phrases.length === 0 || corpus.rows <= 0) return [];
    const avgdl = corpus.tokens / corpus.rows;
    const unique = [...new Set(phrases)];
    const slot = phrases.map((t) => unique.indexOf(t));
    const idf = unique.map((t) => {
      const n = this.docFrequency(t);
      const x = Math.log((corpus.rows - n + 0.5) / (n + 0.5));
      return x <= 0 ? 1e-6 : x;
    });
    const phraseIdf = Float64Array.from(slot, (u) => idf[u] as number);
    const slots = Int32Array.from(slot);
    const tf = new Float64Array(unique.length);
    const lengths = this.lengths;
    // FTS5's sum, phrase by phrase in query order (fts5Bm25Function).
    const score = (D: number): number => {
      let s = 0;
      for (let i = 0; i < slots.length; i++) {
        const f = tf[slots[i] as number] as number;
        s += (phraseIdf[i] as number) * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * D) / avgdl)));
      }
      return s;
    };
    const heap = new TopHeap(k);

    // The changed entities first: few, and they raise the threshold early.
    const seen = new Set<number>();
    for (const term of unique) {
      for (const id of this.deltaTerms.get(term) ?? []) {
        if (seen.has(id)) continue;
        seen.add(id);
        const doc = this.delta.get(id) as DocTerms;
        for (let u = 0; u < unique.length; u++) tf[u] = doc.terms.get(unique[u] as string) ?? 0;
        heap.offer(id, score(doc.length));
      }
    }

    // MaxScore over the base: lists ordered by bound, the cheapest first.
    const drift = Math.max(1, avgdl / this.refAvgdl);
    const order = unique
      .map((term, u) => ({ u, p: this.base.get(term), weight: slot.filter((x) => x === u).length * (idf[u] as number) }))
      .filter((l): l is { u: number; p: Postings; weight: number } => l.p !== undefined && l.p.n > 0)
      .map((l) => ({ ...l, bound: l.weight * l.p.maxPart * drift * BOUND_SLACK }))
      .sort((a, b) => a.bound - b.bound);
    const n = order.length;
    if (n === 0) return heap.sorted();
    // Flat per-list arrays: this loop runs once per candidate entity.
    const ids = order.map((l) => this.ids.subarray(l.p.start, l.p.start + l.p.n));
    const tfs = order.map((l) => this.tfs.subarray(l.p.start, l.p.start + l.p.n));
    const us = Int32Array.from(order, (l) => l.u);
    const weight = Float64Array.from(order, (l) => l.weight);
    const bound = Float64Array.from(order, (l) => l.bound);
    const at = new Int32Array(n);
    const prefix = new Float64Array(n + 1); // prefix[j]: bounds of lists 0..j-1 together
    for (let j = 0; j < n; j++) prefix[j + 1] = (prefix[j] as number) + (bound[j] as number);
    const stale = this.stale;
    let first = 0; // lists[first..] are essential: an entity in none of them cannot enter the heap
    let theta = heap.threshold();
    while (first < n && (prefix[first + 1] as number) < theta) first++;
    while (first < n) {
      let d = 0x7fffffff;
      for (let j = first; j < n; j++) {
        const list = ids[j] as Int32Array;
        const i = at[j] as number;
        if (i < list.length && (list[i] as number) < d) d = list[i] as number;
      }
      if (d === 0x7fffffff) break;
      // The essential lists' exact share (in any order: only compared, with slack).
      const norm = K1 * (1 - B + (B * (lengths[d] as number)) / avgdl);
      let known = 0;
      tf.fill(0);
      for (let j = first; j < n; j++) {
        const i = at[j] as number;
        if ((ids[j] as Int32Array)[i] !== d) continue;
        const f = (tfs[j] as Uint16Array)[i] as number;
        tf[us[j] as number] = f;
        known += (weight[j] as number) * ((f * (K1 + 1.0)) / (f + norm));
        at[j] = i + 1;
      }
      if (stale[d] === 1) continue;
      // Lists below `first` only add to an entity found above: look it up, the largest bound first,
      // while it can still reach the threshold.
      let possible = known * BOUND_SLACK + (prefix[first] as number);
      for (let j = first - 1; j >= 0 && possible >= theta; j--) {
        const list = ids[j] as Int32Array;
        const i = seek(list, at[j] as number, d);
        at[j] = i;
        possible -= bound[j] as number;
        if (list[i] !== d) continue;
        const f = (tfs[j] as Uint16Array)[i] as number;
        tf[us[j] as number] = f;
        possible += (weight[j] as number) * ((f * (K1 + 1.0)) / (f + norm)) * BOUND_SLACK;
      }
      if (possible < theta) continue;
      if (!heap.offer(d, score(lengths[d] as number))) continue;
      theta = heap.threshold();
      while (first < n && (prefix[first + 1] as number) < theta) first++;
    }
    return heap.sorted();
  }

  /** The whole index as base postings (the delta merged first), for the file (keyword-topk-file.ts). */
  baseForSaving(): { terms: string[]; counts: Uint32Array; ids: Int32Array; tfs: Uint16Array; lengths: Int32Array } {
    if (this.delta.size > 0 || this.staleIds.length > 0) this.merge();
    let last = this.lengths.length - 1;
    while (last >= 0 && (this.lengths[last] as number) < 0) last--;
    // Terms' postings lie in the shared arrays in the map's order, back to back (build, file and
    // merge all write them so).
    const terms = [...this.base.keys()];
    const counts = Uint32Array.from(this.base.values(), (p) => p.n);
    return {
      terms,
      counts,
      ids: this.ids.subarray(0, this.used),
      tfs: this.tfs.subarray(0, this.used),
      lengths: this.lengths.subarray(0, last + 1),
    };
  }

  /** Approximate bytes held: postings, lengths, flags, the term dictionary (the delta is small by construction). */
  bytes(): number {
    let b = this.ids.byteLength + this.tfs.byteLength + this.lengths.byteLength + this.stale.byteLength;
    for (const term of this.base.keys()) b += 2 * term.length + 80;
    return b;
  }

  /** Folds the delta into the base and drops stale entries: the base is then the whole truth. */
  merge(): void {
    const added = new Map<string, number[]>();
    let addedCount = 0;
    for (const id of [...this.delta.keys()].sort((a, b) => a - b)) {
      for (const term of (this.delta.get(id) as DocTerms).terms.keys()) {
        let list = added.get(term);
        if (list === undefined) added.set(term, (list = []));
        list.push(id);
        addedCount++;
      }
    }
    const stale = this.stale;
    const oldIds = this.ids;
    const oldTfs = this.tfs;
    const ids = new Int32Array(Math.max(1024, this.used + addedCount));
    const tfs = new Uint16Array(ids.length);
    let w = 0;
    const base = new Map<string, Postings>();
    const terms = new Set([...this.base.keys(), ...added.keys()]);
    for (const term of terms) {
      const old = this.base.get(term);
      const more = added.get(term) ?? [];
      const start = w;
      let i = old?.start ?? 0;
      const end = old === undefined ? 0 : old.start + old.n;
      let j = 0;
      while (i < end || j < more.length) {
        const a = i < end ? (oldIds[i] as number) : 0x7fffffff;
        const m = j < more.length ? (more[j] as number) : 0x7fffffff;
        if (a < m) {
          if (stale[a] === 0) {
            ids[w] = a;
            tfs[w++] = oldTfs[i] as number;
          }
          i++;
        } else {
          ids[w] = m;
          tfs[w++] = Math.min(0xffff, (this.delta.get(m) as DocTerms).terms.get(term) as number);
          j++;
          if (a === m) i++; // cannot happen (a changed entity is stale in the base); kept safe
        }
      }
      if (w > start) base.set(term, { start, n: w - start, maxPart: 0, stale: 0, staleGen: 0 });
    }
    this.base = base;
    this.ids = ids;
    this.tfs = tfs;
    this.used = w;
    for (const id of this.staleIds) stale[id] = 0;
    this.staleIds = [];
    this.staleGen++;
    this.delta.clear();
    this.deltaTerms.clear();
    this.finishBase();
  }

  /**
   * The list's largest tf part, f(k1+1) / (f + k1(1 - b + b·D/avgdl)), at the reference average
   * length. Each entity's own pair (f, D) is used: a bound from the largest f and the smallest D
   * of different entities was several times too high, and kept common terms essential.
   */
  private bound(p: Postings): void {
    const ref = this.refAvgdl;
    const { ids, tfs, lengths } = this;
    let max = 0;
    for (let i = p.start; i < p.start + p.n; i++) {
      const f = tfs[i] as number;
      const D = Math.max(0, lengths[ids[i] as number] as number); // a stale entity's may be unset: 0 bounds it
      max = Math.max(max, (f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * D) / ref)));
    }
    p.maxPart = max;
  }

  /** The average length the bounds are computed at: the base's own (any positive value is sound). */
  private setReference(): void {
    let tokens = 0;
    let count = 0;
    for (const length of this.lengths) {
      if (length < 0) continue;
      tokens += length;
      count++;
    }
    this.refAvgdl = count > 0 && tokens > 0 ? tokens / count : 1;
  }

  /** Stale entries in a term's base postings: each changed entity looked up, counted once per change. */
  private staleIn(p: Postings): number {
    if (p.staleGen === this.staleGen) return p.stale;
    let count = 0;
    const ids = this.ids.subarray(p.start, p.start + p.n);
    for (const id of this.staleIds) {
      const at = seek(ids, 0, id);
      if (at < ids.length && ids[at] === id) count++;
    }
    p.stale = count;
    p.staleGen = this.staleGen;
    return count;
  }

  private grow(id: number): void {
    if (id < this.lengths.length) return;
    let size = this.lengths.length;
    while (size <= id) size *= 2;
    const lengths = new Int32Array(size).fill(-1);
    lengths.set(this.lengths);
    const stale = new Uint8Array(size);
    stale.set(this.stale);
    this.lengths = lengths;
    this.stale = stale;
  }
}
