/**
 * The capture capability (optional, capture-store.ts): the project column, appends that keep each
 * turn's kind and time and skip what is held, per-entity bounds that overflow in order, the brief's
 * reads, projects listed and moved, and migrate carrying the column. Skipped for a store without it.
 */
import { describe, expect, it } from 'vitest';
import { keywordExpr } from '../../helpers/fixtures.js';
import type { CaptureStore, DatedObservation, Store } from '../../../src/store/store.js';
import { seed, T0, useStore, type StoreFactory } from './fixture.js';

const turn = (content: string, minutes: number, kind = 'prompt'): DatedObservation => ({ content, kind, createdAt: T0 + minutes * 60_000 });

const bounds = { maxObservations: 1_000, maxBytes: 4 * 1024 * 1024 };

export function captureConformance(name: string, makeStore: StoreFactory): void {
  describe(`Store conformance: ${name}: capture`, () => {
    const store = useStore(makeStore, (s: Store) =>
      s.capture === undefined ? `${name} cannot store captured conversations (store.capture is undefined)` : undefined,
    );
    const capture = (): CaptureStore => {
      const c = store().capture;
      if (c === undefined) throw new Error('skipped above');
      return c;
    };

    it('creates the entity in its project, keeps each turn kind and time, and indexes it like any write', async () => {
      const { graph, usage, keywords } = store();
      await seed(graph);
      const result = await capture().append(
        {
          name: 'Claude Code session 2026-01-01 3f2a9c1e',
          entityType: 'session',
          project: 'github.com/acme/shop',
          observations: [turn('user: make the checkout retry on timeouts', 1), turn('assistant: added a retry loop', 2, 'reply')],
          ...bounds,
        },
        T0 + 3_600_000,
      );
      expect(result).toMatchObject({ created: true, held: 0, overflow: [] });
      expect(result.added.map((o) => o.content)).toEqual(['user: make the checkout retry on timeouts', 'assistant: added a retry loop']);
      const ids = await graph.idsByName(['Claude Code session 2026-01-01 3f2a9c1e', 'Alice']);
      const [session, alice] = ids;
      const facts = (await usage.signals(ids)).facts;
      expect(facts.get(session ?? ids[0]!)).toMatchObject({
        project: 'github.com/acme/shop',
        entityType: 'session',
        createdAt: T0 + 60_000,
      });
      expect(facts.get(alice ?? ids[0]!)?.project).toBeUndefined();
      const stored = (await graph.entitiesById(ids)).get(session ?? ids[0]!);
      expect(stored?.kinds).toEqual(['prompt', 'reply']);
      expect(stored?.project).toBe('github.com/acme/shop');
      if (keywords !== undefined) {
        expect((await keywords.search(keywordExpr('checkout'), 10)).map((h) => h.id)).toEqual([session]);
        expect((await keywords.search(keywordExpr('reply'), 10)).map((h) => h.id)).toEqual([session]);
      }
      if (store().transfer !== undefined) {
        const page = await store().transfer?.readEntities(0, 100);
        const record = page?.records.find((r) => r.entityType === 'session');
        expect(record?.project).toBe('github.com/acme/shop');
        expect(record?.observations).toEqual([
          { content: 'user: make the checkout retry on timeouts', kind: 'prompt', createdAt: T0 + 60_000 },
          { content: 'assistant: added a retry loop', kind: 'reply', createdAt: T0 + 120_000 },
        ]);
        expect(page?.records.find((r) => r.name === 'Alice')?.project).toBeUndefined();
      }
    });

    it('stores a turn once: appended twice, given twice, or held by an earlier part', async () => {
      const c = capture();
      const first = {
        name: 'S',
        entityType: 'session',
        project: 'p',
        observations: [turn('user: one', 1), turn('user: two', 2)],
        ...bounds,
      };
      await c.append(first, T0);
      const again = await c.append(
        { ...first, observations: [turn('user: two', 2), turn('user: three', 3), turn('user: three', 3)] },
        T0 + 1,
      );
      expect(again).toMatchObject({ created: false, held: 2 });
      expect(again.added.map((o) => o.content)).toEqual(['user: three']);
      const part2 = await c.append(
        { ...first, name: 'S part 2', heldBy: ['S'], observations: [turn('user: one', 1), turn('user: four', 4)] },
        T0 + 2,
      );
      expect(part2).toMatchObject({ created: true, held: 1 });
      expect(part2.added.map((o) => o.content)).toEqual(['user: four']);
      const { entities } = await store().graph.openNodes(['S', 'S part 2']);
      expect(entities.map((e) => e.observations)).toEqual([['user: one', 'user: two', 'user: three'], ['user: four']]);
    });

    it('returns what does not fit the entity bounds, in order, and adds nothing after the first that does not', async () => {
      const c = capture();
      const base = { name: 'Long', entityType: 'session', project: undefined };
      const r1 = await c.append(
        { ...base, observations: [1, 2, 3, 4].map((i) => turn(`t${i}`, i)), maxObservations: 3, maxBytes: 1_000 },
        T0,
      );
      expect(r1.added.map((o) => o.content)).toEqual(['t1', 't2', 't3']);
      expect(r1.overflow.map((o) => o.content)).toEqual(['t4']);
      const r2 = await c.append(
        {
          ...base,
          name: 'Bytes',
          observations: [turn('x'.repeat(6), 1), turn('y'.repeat(6), 2), turn('z', 3)],
          maxObservations: 10,
          maxBytes: 10,
        },
        T0,
      );
      expect(r2.added.map((o) => o.content)).toEqual(['xxxxxx']);
      expect(r2.overflow.map((o) => o.content)).toEqual(['yyyyyy', 'z']);
      // An entity that gains nothing is created all the same (a project entity holds no turns).
      expect(await c.append({ ...base, name: 'Empty', entityType: 'project', observations: [], ...bounds }, T0)).toMatchObject({
        created: true,
        added: [],
      });
      expect((await store().graph.openNodes(['Empty'])).entities).toHaveLength(1);
    });

    it('finds names by prefix and a part of them', async () => {
      const c = capture();
      for (const n of [
        'Codex session 2026-01-01 aaaa1111',
        'Codex session 2026-01-02 bbbb2222',
        'Codex session 2026-01-02 bbbb2222 part 2',
        'ChatGPT conversation 2026-01-02 bbbb2222',
      ])
        await c.append({ name: n, entityType: 'session', project: undefined, observations: [], ...bounds }, T0);
      expect(await c.namesStartingWith('Codex session ', ' bbbb2222', 10)).toEqual([
        'Codex session 2026-01-02 bbbb2222',
        'Codex session 2026-01-02 bbbb2222 part 2',
      ]);
      expect(await c.namesStartingWith('Codex session ', ' bbbb2222', 1)).toHaveLength(1);
      expect(await c.namesStartingWith('Gemini CLI session ', '', 10)).toEqual([]);
    });

    it('reads a project entities latest first, with the first and last observation of the kinds asked', async () => {
      const c = capture();
      await c.append(
        {
          name: 'old',
          entityType: 'session',
          project: 'p',
          observations: [turn('user: a', 1), turn('assistant: b', 2, 'reply'), turn('user: c', 3)],
          ...bounds,
        },
        T0 + 9e6,
      );
      await c.append(
        {
          name: 'new',
          entityType: 'session',
          project: 'p',
          observations: [turn('user: d', 10), turn('assistant: e', 11, 'reply')],
          ...bounds,
        },
        T0,
      );
      await c.append({ name: 'other', entityType: 'session', project: 'q', observations: [turn('user: x', 20)], ...bounds }, T0);
      await c.append({ name: 'p', entityType: 'project', project: 'p', observations: [], ...bounds }, T0);
      const sessions = await c.projectEntities('p', { entityType: 'session', kinds: ['prompt'], limit: 10 });
      expect(sessions.map((s) => [s.name, s.observationCount, s.first?.content, s.last?.content])).toEqual([
        ['new', 2, 'user: d', 'user: d'],
        ['old', 3, 'user: a', 'user: c'],
      ]);
      expect(sessions[1]?.last?.createdAt).toBe(T0 + 180_000);
      const all = await c.projectEntities('p', { limit: 10 });
      expect(all.map((e) => e.name).sort()).toEqual(['new', 'old', 'p']);
      expect(all.every((e) => e.first === undefined && e.project === 'p')).toBe(true);
      expect(await c.projectEntities('p', { entityType: 'session', limit: 1 })).toHaveLength(1);
    });

    it('reads observations of some kinds in a project or among given entities, of a status, newest first', async () => {
      const c = capture();
      const { graph } = store();
      await c.append(
        {
          name: 'mine',
          entityType: 'session',
          project: 'p',
          observations: [turn('user: we decided on Postgres', 1, 'decision'), turn('user: hi there', 2)],
          ...bounds,
        },
        T0,
      );
      await c.append(
        {
          name: 'theirs',
          entityType: 'session',
          project: 'q',
          observations: [turn('user: we decided on MySQL', 3, 'decision')],
          ...bounds,
        },
        T0,
      );
      await graph.createEntities(
        [
          { name: 'Global', entityType: 'note', observations: [] },
          { name: 'Done', entityType: 'note', observations: [] },
        ],
        T0,
      );
      await graph.addObservations([{ entityName: 'Global', contents: ['use tabs'], kind: 'decision' }], T0 + 600_000);
      await graph.addObservations([{ entityName: 'Done', contents: ['ship friday'], kind: 'decision' }], T0 + 700_000);
      await graph.setStatus('Done', 'completed', T0);
      const ids = await graph.idsByName(['Global', 'Done']);
      const found = await c.observationsOfKinds(['decision'], { project: 'p', ids, status: 'active', limit: 10 });
      expect(found.map((f) => [f.entity.name, f.observation.content])).toEqual([
        ['Global', 'use tabs'],
        ['mine', 'user: we decided on Postgres'],
      ]);
      expect(found[1]?.observation).toEqual({ content: 'user: we decided on Postgres', kind: 'decision', createdAt: T0 + 60_000 });
      expect(
        (await c.observationsOfKinds(['decision'], { project: undefined, ids, status: undefined, limit: 10 })).map((f) => f.entity.name),
      ).toEqual(['Done', 'Global']);
      expect(await c.observationsOfKinds(['decision'], { project: undefined, ids: [], status: undefined, limit: 10 })).toEqual([]);
    });

    it('lists projects with their counts and moves one project onto another', async () => {
      const c = capture();
      await seed(store().graph);
      await c.append(
        { name: 'a1', entityType: 'session', project: 'gh/old', observations: [turn('user: a', 1), turn('user: b', 2)], ...bounds },
        T0,
      );
      await c.append({ name: 'a2', entityType: 'session', project: 'gh/old', observations: [turn('user: c', 1)], ...bounds }, T0 + 5);
      await c.append({ name: 'b1', entityType: 'session', project: 'gh/new', observations: [turn('user: d', 1)], ...bounds }, T0 + 10);
      expect(await c.projects()).toEqual([
        { project: 'gh/new', entities: 1, observations: 1, lastUpdated: T0 + 10 },
        { project: 'gh/old', entities: 2, observations: 3, lastUpdated: T0 + 5 },
      ]);
      expect(await c.moveProject('gh/old', 'gh/new')).toBe(2);
      expect(await c.moveProject('gh/none', 'gh/new')).toBe(0);
      expect(await c.projects()).toEqual([{ project: 'gh/new', entities: 3, observations: 4, lastUpdated: T0 + 10 }]);
      const ids = await store().graph.idsByName(['a1']);
      expect((await store().usage.signals(ids)).facts.get(ids[0]!)?.project).toBe('gh/new');
    });

    it('is carried by migrate: a merged entity keeps its project', async () => {
      const source = store();
      if (source.transfer === undefined) return;
      const { store: target, cleanup } = await makeStore();
      try {
        await capture().append(
          { name: 'S', entityType: 'session', project: 'p', observations: [turn('user: hello world', 1)], ...bounds },
          T0,
        );
        await source.graph.createEntities([{ name: 'G', entityType: 'note', observations: ['global'] }], T0);
        const page = await source.transfer.readEntities(0, 100);
        await target.transfer?.writeEntities(page.records, false);
        const ids = await target.graph.idsByName(['S', 'G']);
        const facts = (await target.usage.signals(ids)).facts;
        expect(facts.get(ids[0]!)?.project).toBe('p');
        expect(facts.get(ids[1]!)?.project).toBeUndefined();
        expect((await target.graph.entitiesById(ids)).get(ids[0]!)?.kinds).toEqual(['prompt']);
      } finally {
        await cleanup();
      }
    });
  });
}
