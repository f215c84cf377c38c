/**
 * Aside vectors reused by key (embedding-indexer.ts asideVectors; issue 37's asides): a write to an
 * entity with k asides (observations in another language than its own) embeds only the asides whose
 * text changed, and the vectors it stores are those a full re-embed gives. On SQLite and, when a
 * server starts, PostgreSQL. The fake embedder: only which texts are embedded matters here.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, MemoryError } from '../../src/core/errors.js';
import { noopLogger } from '../../src/core/logger.js';
import { splitAsides } from '../../src/core/text/entity-text.js';
import type { EntityId, NewEntity } from '../../src/core/types.js';
import { LazyEmbedder, type Embedder, type EntityInput, type TextKind } from '../../src/embed/embedder.js';
import { EmbeddingIndexer } from '../../src/service/embedding-indexer.js';
import { openPgStore } from '../../src/store/postgres/pg-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { FakeEmbedder, tempDir } from '../helpers/fixtures.js';
import { startPgServer, type PgServer } from '../helpers/pg-server.js';

/** The fake embedder, with every text it is asked to embed one by one (aside and observation texts; entity texts go through embedEntities). */
class CountingEmbedder implements Embedder {
  readonly fake = new FakeEmbedder();
  readonly id = this.fake.id;
  readonly dims = this.fake.dims;
  texts: string[] = [];
  embed(texts: readonly string[], _kind: TextKind): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return this.fake.embed(texts);
  }
  embedEntities(items: readonly EntityInput[]): Promise<Float32Array[]> {
    return this.fake.embedEntities(items);
  }
}

/** The fake embedder, but one vector short of what it is asked for whenever it is asked more than one text. */
class DroppingFakeEmbedder implements Embedder {
  readonly fake = new FakeEmbedder();
  readonly id = this.fake.id;
  readonly dims = this.fake.dims;
  async embed(texts: readonly string[], _kind: TextKind): Promise<Float32Array[]> {
    const vectors = await this.fake.embed(texts);
    return texts.length > 1 ? vectors.slice(0, -1) : vectors;
  }
  embedEntities(items: readonly EntityInput[]): Promise<Float32Array[]> {
    return this.fake.embedEntities(items);
  }
}

const NOW = Date.UTC(2026, 10, 28);
const GARDEN: NewEntity = {
  name: 'Garden',
  entityType: 'place',
  observations: [
    'Tomatoes and peppers grow in the garden behind the house.',
    'Der Nutzer hat mich gefragt, wer das Gemüse im Garten anbaut.',
    'Die Tomaten wachsen im Sommer hinter dem Haus.',
    'Er gießt die Pflanzen jeden Morgen mit dem Schlauch.',
  ],
};
const NEW_ASIDE = 'Sie hat mir gesagt, dass die Paprika im August reif sind.';
const NEW_OWN = 'The drip line was replaced in the spring.';

interface Backend {
  /** A new, empty memory; closed by the returned function. */
  open(): Promise<{ store: Store; close: () => Promise<void> }>;
}

async function indexed(store: Store, counting: CountingEmbedder): Promise<EmbeddingIndexer> {
  const indexer = new EmbeddingIndexer(store, new LazyEmbedder(async () => counting), noopLogger);
  await indexer.ready();
  return indexer;
}

/** The entity's stored aside vectors, by key, as plain arrays. */
async function asidesOf(store: Store, name: string): Promise<Map<string, number[]>> {
  const [id] = (await store.graph.idsByName([name])) as EntityId[];
  const found = (await store.vectors?.asideVectors?.([id as EntityId]))?.get(id as EntityId) ?? new Map<string, Float32Array>();
  return new Map([...found].map(([key, v]) => [key, [...v]]));
}

function asideReuse(name: string, backend: Backend): void {
  describe(`aside vectors on ${name}`, () => {
    it('a note added to an entity with 3 asides embeds that one aside; the vectors equal a full re-embed', async () => {
      expect(splitAsides(GARDEN.observations).asides).toHaveLength(3);
      expect(splitAsides([...GARDEN.observations, NEW_ASIDE]).asides).toHaveLength(4);
      const here = await backend.open();
      const fresh = await backend.open();
      try {
        const counting = new CountingEmbedder();
        const indexer = await indexed(here.store, counting);
        await here.store.graph.createEntities([GARDEN], NOW);
        await indexer.drain();
        expect(counting.texts).toHaveLength(3);

        counting.texts = [];
        await here.store.graph.addObservations([{ entityName: 'Garden', contents: [NEW_ASIDE] }], NOW + 1);
        expect(await indexer.drain()).toBe(1);
        expect(counting.texts).toHaveLength(1);
        expect(counting.texts[0]).toContain(NEW_ASIDE);

        // The same entity written at once and embedded in full: the same keys and vectors.
        const all = new CountingEmbedder();
        const full = await indexed(fresh.store, all);
        await fresh.store.graph.createEntities([{ ...GARDEN, observations: [...GARDEN.observations, NEW_ASIDE] }], NOW);
        await full.drain();
        expect(all.texts).toHaveLength(4);
        const reused = await asidesOf(here.store, 'Garden');
        expect(reused.size).toBe(4);
        expect(reused).toEqual(await asidesOf(fresh.store, 'Garden'));
      } finally {
        await here.close();
        await fresh.close();
      }
    });

    it("embeds every aside again when the entity's own observations change (each aside's text holds them)", async () => {
      const here = await backend.open();
      try {
        const counting = new CountingEmbedder();
        const indexer = await indexed(here.store, counting);
        await here.store.graph.createEntities([GARDEN], NOW);
        await indexer.drain();
        const before = await asidesOf(here.store, 'Garden');
        counting.texts = [];
        await here.store.graph.addObservations([{ entityName: 'Garden', contents: [NEW_OWN] }], NOW + 1);
        await indexer.drain();
        expect(counting.texts).toHaveLength(3);
        expect(counting.texts.every((t) => t.includes(NEW_OWN))).toBe(true);
        const after = await asidesOf(here.store, 'Garden');
        expect(after.size).toBe(3);
        expect([...after.keys()].some((key) => before.has(key))).toBe(false);
      } finally {
        await here.close();
      }
    });

    it('an engine that gives no vector for an aside text fails the batch with an internal error, and stores no zero vector in its place', async () => {
      const here = await backend.open();
      try {
        const dropping = new DroppingFakeEmbedder();
        const indexer = new EmbeddingIndexer(here.store, new LazyEmbedder(async () => dropping), noopLogger);
        await indexer.ready();
        await here.store.graph.createEntities([GARDEN], NOW);
        const failed = await indexer.drain().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failed).toBeInstanceOf(MemoryError);
        expect(failed).toMatchObject({ code: ERROR_CODES.INTERNAL });
        expect((failed as Error).message).toContain('gave 2 vectors for 3 aside texts');
        expect((failed as Error).message).toContain('Garden');
        expect(await asidesOf(here.store, 'Garden')).toEqual(new Map());
      } finally {
        await here.close();
      }
    });
  });
}

asideReuse('SQLite', {
  async open() {
    const tmp = tempDir();
    const store = openSqliteStore({ path: join(tmp.dir, 'memory.db') });
    return {
      store,
      close: async () => {
        await store.close();
        tmp.cleanup();
      },
    };
  },
});

const started = await startPgServer();
const server: PgServer | undefined = 'unavailable' in started ? undefined : started;
afterAll(async () => {
  await server?.stop();
});
if (server === undefined) {
  describe('aside vectors on PostgreSQL', () => {
    it.skip(`skipped: ${'unavailable' in started ? started.unavailable : ''}`, () => undefined);
  });
} else {
  asideReuse('PostgreSQL', {
    async open() {
      const url = await server.createDatabase();
      const store = openPgStore({ url, poolSize: 2 });
      return {
        store,
        close: async () => {
          await store.close();
          await server.dropDatabase(url);
        },
      };
    },
  });
}
