/**
 * Issue 38, item 4: concurrent searches' texts embedded together in the model's worker, and the
 * vectors of recent search texts kept. Each caller gets its own vector with the bits it gets alone;
 * the cache never answers with another text's, kind's or model's vector.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueryBatches } from '../../src/embed/onnx/query-batches.js';
import { ThreadedEmbedder, type ThreadedEmbedderOptions } from '../../src/embed/onnx/threaded-embedder.js';
import { QueryVectorCache } from '../../src/embed/query-cache.js';
import { modelCacheDir, realEmbedder } from '../helpers/fixtures.js';

/** A vector's bits, so that equal means equal to the last bit (and -0 is not 0). */
const bits = (v: Float32Array | undefined): string =>
  v === undefined ? 'none' : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');

const paragraph =
  'The archive holds the letters of the garden society from 1890 to 1950, the minutes of its meetings, the plans of the greenhouse and the budget of every year, ';

/** Search texts of very different token lengths: one token, a sentence, Spanish, an emoji, nothing, and past the model's 512. */
const texts = [
  'memory',
  'where did Ada work',
  'la tetera es azul',
  '¿Quién fue el primer presidente de la república y en qué año empezó su mandato?',
  '😀',
  '',
  'what is the budget for the garden plans of the library in the year of the long archive review',
  'cats',
  'dogs',
  paragraph,
  paragraph.repeat(3),
  paragraph.repeat(30), // truncated at the model's limit
  'Ada',
  'When did Caroline go to the LGBTQ support group?',
  'What fields would Caroline be likely to pursue in her education?',
  '¿Cuál es el nombre del río que atraviesa la ciudad?',
];

async function start(options: Omit<ThreadedEmbedderOptions, 'model'>): Promise<ThreadedEmbedder> {
  const model = await realEmbedder();
  return ThreadedEmbedder.start({
    model: { modelDir: model.description.location, cacheDir: modelCacheDir(), modelId: model.id, allowRemote: false, threads: 1 },
    ...options,
  });
}

describe.each([
  { name: 'one thread, batches of up to 16', threads: 1, queryBatch: 16 },
  { name: 'two threads, batches of up to 5', threads: 2, queryBatch: 5 },
])('query batching in the worker ($name)', ({ threads, queryBatch }) => {
  let threaded: ThreadedEmbedder;
  beforeAll(async () => {
    const model = await realEmbedder();
    threaded = await ThreadedEmbedder.start({
      model: { modelDir: model.description.location, cacheDir: modelCacheDir(), modelId: model.id, allowRemote: false, threads },
      queryBatch,
      // No cache: every text goes to the model, alone or batched.
      queryCache: { entries: 0 },
    });
  });
  afterAll(async () => {
    await threaded.close();
  });

  it('gives each of many concurrent searches of different lengths its own vector, the bits it gets alone', async () => {
    const alone: Float32Array[] = [];
    for (const text of texts) alone.push(...(await threaded.embed([text], 'query')));
    expect(threaded.queryStats().largestBatch).toBe(1); // one at a time: nothing to batch

    // Every search at once, in another order, and one call with several texts.
    const order = [...texts.keys()].reverse();
    const [together, several] = await Promise.all([
      Promise.all(order.map((i) => threaded.embed([texts[i] as string], 'query'))),
      threaded.embed(texts.slice(0, 6), 'query'),
    ]);
    expect(threaded.queryStats().largestBatch).toBeGreaterThan(1);
    expect(threaded.queryStats().largestBatch).toBeLessThanOrEqual(queryBatch);
    order.forEach((i, k) => expect(bits(together[k]?.[0]), JSON.stringify(texts[i]).slice(0, 40)).toBe(bits(alone[i])));
    expect(several.map(bits)).toEqual(alone.slice(0, 6).map(bits));
    // Distinct texts, distinct vectors: no caller was handed another's.
    expect(new Set(alone.map(bits)).size).toBe(texts.length);
  }, 180_000);
});

describe('the cache of recent search texts (real model)', () => {
  let cached: ThreadedEmbedder;
  let fresh: ThreadedEmbedder;
  beforeAll(async () => {
    [cached, fresh] = await Promise.all([start({}), start({ queryCache: { entries: 0 } })]);
  });
  afterAll(async () => {
    await Promise.all([cached.close(), fresh.close()]);
  });

  it('answers a repeated search from the cache with the bits a fresh embedding has', async () => {
    const [first] = await cached.embed(['where did Ada work'], 'query');
    const [again] = await cached.embed(['where did Ada work'], 'query');
    expect(cached.queryStats()).toMatchObject({ embedded: 1, cached: 1 });
    const [made] = await fresh.embed(['where did Ada work'], 'query');
    expect(bits(again)).toBe(bits(first));
    expect(bits(again)).toBe(bits(made));
  });

  it('never answers with the vector of another text or of the same text as a passage', async () => {
    const near = ['where did Ada work?', 'Where did Ada work', 'where did Ada work ', 'where did  Ada work', 'where did Ada wor'];
    const before = cached.queryStats();
    const [original] = await cached.embed(['where did Ada work'], 'query');
    const mine = await cached.embed(near, 'query');
    const theirs = await fresh.embed(near, 'query');
    expect(mine.map(bits)).toEqual(theirs.map(bits));
    // Each was embedded, not looked up: the same as a fresh embedding of that very text. (The
    // tokenizer reads the extra spaces as nothing, so those two have the original's bits by right.)
    for (const i of [0, 1, 4]) expect(bits(mine[i])).not.toBe(bits(original));
    expect(cached.queryStats().embedded - before.embedded).toBe(near.length);

    const [asPassage] = await cached.embed(['where did Ada work'], 'passage');
    const [freshPassage] = await fresh.embed(['where did Ada work'], 'passage');
    expect(bits(asPassage)).toBe(bits(freshPassage));
    expect(bits(asPassage)).not.toBe(bits(original));
  });

  it('gives each caller its own copy: changing one vector changes no later answer', async () => {
    const [first] = await cached.embed(['la tetera es azul'], 'query');
    const kept = bits(first);
    first?.fill(0);
    const [second, third] = await Promise.all([cached.embed(['la tetera es azul'], 'query'), cached.embed(['la tetera es azul'], 'query')]);
    second?.[0]?.fill(1);
    expect(bits(third?.[0])).toBe(kept);
    const [fourth] = await cached.embed(['la tetera es azul'], 'query');
    expect(bits(fourth)).toBe(kept);
  });

  it('embeds a text asked by several searches at once a single time', async () => {
    const before = cached.queryStats();
    const answers = await Promise.all(Array.from({ length: 6 }, () => cached.embed(['a text asked six times at once'], 'query')));
    expect(cached.queryStats().embedded - before.embedded).toBe(1);
    expect(new Set(answers.map(([v]) => bits(v))).size).toBe(1);
  });
});

describe('a closed embedder', () => {
  it('answers no search, not even one it keeps', async () => {
    const threaded = await start({});
    await threaded.embed(['kept before closing'], 'query');
    await threaded.close();
    await expect(threaded.embed(['kept before closing'], 'query')).rejects.toThrow(/closed/);
  });
});

describe('QueryVectorCache', () => {
  const v = (...xs: number[]): Float32Array => Float32Array.from(xs);

  it('keys by model, kind and exact text', () => {
    const cache = new QueryVectorCache({ entries: 8 });
    cache.set('multilingual-e5-small', 'query', 'ada', v(1, 2));
    expect(cache.get('multilingual-e5-small', 'query', 'ada')).toEqual(v(1, 2));
    expect(cache.get('all-MiniLM-L6-v2', 'query', 'ada')).toBeUndefined();
    expect(cache.get('multilingual-e5-small', 'passage', 'ada')).toBeUndefined();
    expect(cache.get('multilingual-e5-small', 'query', 'Ada')).toBeUndefined();
    expect(cache.get('multilingual-e5-small', 'query', 'ada ')).toBeUndefined();
    // Keys that a naive joining of the parts would confuse.
    cache.set('a', 'query', 'b","query","c', v(3));
    expect(cache.get('a","query","b', 'query', 'c')).toBeUndefined();
  });

  it('keeps the most recently used entries up to its bound, and no long text', () => {
    const cache = new QueryVectorCache({ entries: 2, longestText: 10 });
    cache.set('m', 'query', 'one', v(1));
    cache.set('m', 'query', 'two', v(2));
    cache.get('m', 'query', 'one');
    cache.set('m', 'query', 'three', v(3));
    expect(cache.size).toBe(2);
    expect(cache.get('m', 'query', 'two')).toBeUndefined();
    expect(cache.get('m', 'query', 'one')).toEqual(v(1));
    cache.set('m', 'query', 'eleven char', v(11));
    expect(cache.get('m', 'query', 'eleven char')).toBeUndefined();
    cache.clear();
    expect(cache.get('m', 'query', 'one')).toBeUndefined();
    const none = new QueryVectorCache({ entries: 0 });
    none.set('m', 'query', 'one', v(1));
    expect(none.size).toBe(0);
  });
});

describe('QueryBatches (a fake model: only who gets which answer matters)', () => {
  /** Each text's "vector" is its length; a text "poison" breaks any call it is in. */
  const fakeModel =
    (calls: string[][]) =>
    async (batch: readonly string[]): Promise<Float32Array[]> => {
      calls.push([...batch]);
      if (batch.includes('poison')) throw new Error('the pass failed');
      return batch.map((t) => Float32Array.of(t.length));
    };

  const query = (texts: string[], outcomes: Map<string, string>) => ({
    texts,
    answer: (vectors: Float32Array[], batchSize: number) =>
      outcomes.set(texts.join('+'), `${vectors.map((x) => x[0]).join(',')} in ${batchSize}`),
    fail: (error: unknown) => outcomes.set(texts.join('+'), `failed: ${(error as Error).message}`),
  });

  it('fails only the search whose text broke the batch; the others get their vectors', async () => {
    const calls: string[][] = [];
    const outcomes = new Map<string, string>();
    const batches = new QueryBatches({ maxTexts: 16, waitMs: 0 });
    for (const texts of [['ab'], ['poison'], ['abcd', 'a']]) batches.add(query(texts, outcomes));
    await batches.runNext(fakeModel(calls));
    expect(calls).toEqual([['ab', 'poison', 'abcd', 'a'], ['ab'], ['poison'], ['abcd', 'a']]);
    expect(Object.fromEntries(outcomes)).toEqual({ ab: '2 in 1', poison: 'failed: the pass failed', 'abcd+a': '4,1 in 1' });
    expect(batches.waiting).toBe(false);
  });

  it('takes the oldest searches up to maxTexts texts; a larger search goes alone', async () => {
    const calls: string[][] = [];
    const outcomes = new Map<string, string>();
    const batches = new QueryBatches({ maxTexts: 3, waitMs: 0 });
    for (const texts of [['a'], ['bb'], ['ccc', 'dd'], ['e', 'f', 'g', 'h'], ['i']]) batches.add(query(texts, outcomes));
    while (batches.waiting) await batches.runNext(fakeModel(calls));
    expect(calls).toEqual([['a', 'bb'], ['ccc', 'dd'], ['e', 'f', 'g', 'h'], ['i']]);
    expect(outcomes.get('a')).toBe('1 in 2');
    expect(outcomes.get('ccc+dd')).toBe('3,2 in 1');
  });

  it('lets the first search wait up to waitMs for others, and no longer once the batch is full', async () => {
    vi.useFakeTimers();
    try {
      const calls: string[][] = [];
      const outcomes = new Map<string, string>();
      const batches = new QueryBatches({ maxTexts: 3, waitMs: 5 }, () => Date.now());
      batches.add(query(['a'], outcomes));
      const first = batches.runNext(fakeModel(calls));
      await vi.advanceTimersByTimeAsync(3);
      expect(calls).toEqual([]);
      batches.add(query(['b'], outcomes));
      await vi.advanceTimersByTimeAsync(2);
      await first;
      expect(calls).toEqual([['a', 'b']]);

      batches.add(query(['c'], outcomes));
      const second = batches.runNext(fakeModel(calls));
      batches.add(query(['d', 'e'], outcomes));
      await vi.advanceTimersByTimeAsync(0);
      await second;
      expect(calls).toEqual([
        ['a', 'b'],
        ['c', 'd', 'e'],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});
