import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { RRF_K } from '../../../src/core/rank/constants.js';
import { reciprocalRankFusion } from '../../../src/core/rank/fuse-rrf.js';
import type { KeywordHit, VectorHit } from '../../../src/core/signals.js';
import { asEntityId, type EntityId } from '../../../src/core/types.js';

const A = asEntityId(1);
const B = asEntityId(2);
const C = asEntityId(3);
const D = asEntityId(4);
const FILLER_3 = asEntityId(103);
const FILLER_4 = asEntityId(104);

const knn = (ids: readonly EntityId[]): VectorHit[] => ids.map((id, i) => ({ id, distance: 0.1 * (i + 1) }));
const fts = (ids: readonly EntityId[]): KeywordHit[] => ids.map((id, i) => ({ id, bm25: -10 + i }));

function scoreOf(fused: ReturnType<typeof reciprocalRankFusion>, id: EntityId): number {
  const hit = fused.find((f) => f.id === id);
  if (hit === undefined) throw new Error(`entity ${id} missing from the fused list`);
  return hit.rrfScore;
}

describe('reciprocalRankFusion', () => {
  it('uses the spec constant k = 60', () => {
    expect(RRF_K).toBe(60);
  });

  describe('spec/hybrid-search.md RRF example table', () => {
    // KNN: A 1, B 2, (fillers) 3 and 4, D 5. FTS5: C 1, D 2, A 3.
    const fused = reciprocalRankFusion(knn([A, B, FILLER_3, FILLER_4, D]), fts([C, D, A]));

    it('Entity A (KNN 1 + FTS 3) scores 1/61 + 1/63 ≈ 0.0322', () => {
      expect(scoreOf(fused, A)).toBeCloseTo(1 / 61 + 1 / 63, 12);
      // The spec prints four decimals (truncated): 0.032266 → 0.0322.
      expect(Math.abs(scoreOf(fused, A) - 0.0322)).toBeLessThan(1e-4);
    });

    it('Entity B (KNN 2 only) scores 1/62 ≈ 0.0161', () => {
      expect(scoreOf(fused, B)).toBeCloseTo(1 / 62, 12);
      expect(scoreOf(fused, B)).toBeCloseTo(0.0161, 4);
    });

    it('Entity C (FTS 1 only) scores 1/61 ≈ 0.0164', () => {
      expect(scoreOf(fused, C)).toBeCloseTo(1 / 61, 12);
      expect(scoreOf(fused, C)).toBeCloseTo(0.0164, 4);
    });

    it('Entity D (KNN 5 + FTS 2) scores 1/65 + 1/62 ≈ 0.0315', () => {
      expect(scoreOf(fused, D)).toBeCloseTo(1 / 65 + 1 / 62, 12);
      expect(scoreOf(fused, D)).toBeCloseTo(0.0315, 4);
    });

    it('orders A, D, C, B (C edges out B) ahead of the lower-ranked fillers', () => {
      expect(fused.map((f) => f.id)).toEqual([A, D, C, B, FILLER_3, FILLER_4]);
    });

    it('keeps the KNN distance and both 1-based ranks where present', () => {
      const a = fused.find((f) => f.id === A);
      const c = fused.find((f) => f.id === C);
      expect(a).toMatchObject({ semantic: { rank: 1, distance: 0.1 }, keyword: { rank: 3, bm25: -8 } });
      expect(c).toMatchObject({ semantic: undefined, keyword: { rank: 1, bm25: -10 } });
    });
  });

  it('returns [] when both lists are empty', () => {
    expect(reciprocalRankFusion([], [])).toEqual([]);
  });

  it('fuses one list only: KNN only', () => {
    const fused = reciprocalRankFusion(knn([B, A]), []);
    expect(fused.map((f) => f.id)).toEqual([B, A]);
    expect(fused[0]?.rrfScore).toBeCloseTo(1 / 61, 12);
    expect(fused[1]?.rrfScore).toBeCloseTo(1 / 62, 12);
    expect(fused.every((f) => f.keyword === undefined && f.semantic !== undefined)).toBe(true);
  });

  it('fuses one list only: FTS only', () => {
    const fused = reciprocalRankFusion([], fts([C, A]));
    expect(fused.map((f) => f.id)).toEqual([C, A]);
    expect(fused[0]?.rrfScore).toBeCloseTo(1 / 61, 12);
    expect(fused.every((f) => f.semantic === undefined)).toBe(true);
  });

  it('breaks ties by ascending id', () => {
    // D is first in KNN, B first in FTS: both 1/61; A and C both 1/62.
    const fused = reciprocalRankFusion(knn([D, C]), fts([B, A]));
    expect(fused.map((f) => f.id)).toEqual([B, D, A, C]);
    expect(fused[0]?.rrfScore).toBe(fused[1]?.rrfScore);
  });

  it('counts an entity repeated within one leg once, at its first position', () => {
    const fused = reciprocalRankFusion(
      [
        { id: A, distance: 0.2 },
        { id: A, distance: 0.9 },
      ],
      fts([B, B, B]),
    );
    expect(scoreOf(fused, A)).toBeCloseTo(1 / 61, 12);
    expect(scoreOf(fused, B)).toBeCloseTo(1 / 61, 12);
    expect(fused.find((f) => f.id === A)?.semantic?.distance).toBe(0.2);
    expect(fused).toHaveLength(2);
  });

  it('honours a custom k', () => {
    const fused = reciprocalRankFusion(knn([A, B]), fts([B]), 1);
    expect(scoreOf(fused, A)).toBeCloseTo(1 / 2, 12);
    expect(scoreOf(fused, B)).toBeCloseTo(1 / 3 + 1 / 2, 12);
    expect(fused.map((f) => f.id)).toEqual([B, A]);
  });

  it('k = 0 is used as given, not replaced by the default', () => {
    const fused = reciprocalRankFusion(knn([A]), [], 0);
    expect(scoreOf(fused, A)).toBe(1);
  });

  it('does not mutate its inputs', () => {
    const semantic = knn([A, B]);
    const keyword = fts([C]);
    const before = JSON.stringify([semantic, keyword]);
    reciprocalRankFusion(semantic, keyword);
    expect(JSON.stringify([semantic, keyword])).toBe(before);
  });

  it('property: one entry per distinct id, sorted by score desc then id asc, scores match the formula', () => {
    const ids = fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 15 });
    fc.assert(
      fc.property(ids, ids, fc.integer({ min: 0, max: 100 }), (sem, key, k) => {
        const fused = reciprocalRankFusion(knn(sem.map(asEntityId)), fts(key.map(asEntityId)), k);
        expect(fused.map((f) => f.id).sort((x, y) => x - y)).toEqual([...new Set([...sem, ...key])].sort((x, y) => x - y));
        for (let i = 1; i < fused.length; i++) {
          const prev = fused[i - 1]!;
          const cur = fused[i]!;
          expect(prev.rrfScore > cur.rrfScore || (prev.rrfScore === cur.rrfScore && prev.id < cur.id)).toBe(true);
        }
        for (const f of fused) {
          const s = sem.indexOf(f.id);
          const w = key.indexOf(f.id);
          const expected = (s >= 0 ? 1 / (k + s + 1) : 0) + (w >= 0 ? 1 / (k + w + 1) : 0);
          expect(f.rrfScore).toBeCloseTo(expected, 12);
        }
      }),
    );
  });
});
