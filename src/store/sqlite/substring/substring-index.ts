/**
 * search_nodes in memory, for queries without whitespace: each entity's name, type and
 * observations, and the distinct folded words of that text (lower-cased, accents removed:
 * fold.ts) with the entities holding each. A folded query without whitespace lies inside one
 * whitespace-separated word of the folded text, so the entities holding a word that contains it
 * are exactly those whose text contains it: a look-up of about 20 µs and an answer read from memory, where FTS5's trigram doclists cost about
 * 0.5 ms whatever the number of matches (every trigram of short words is in thousands of entities)
 * and reading the matches' rows about as much again.
 *
 * Kept in step with every process's writes through `keyword_log`, which every change of an
 * entity's name, type or observations writes (SqliteGraph.syncEntity, deleteIndexes), replayed
 * before each search as the top-k keyword index does: a changed entity's text is read again whole
 * (or dropped, when it is gone). Its old words stay listed until the next rebuild, which is
 * harmless because an entity a replay listed again is tested on its current text
 * (HeldEntity.replayed). Built in steps when a server starts (MemoryService.warm) or on the first
 * search, off the answer's path; SQL answers meanwhile, and above MAX_ENTITIES.
 *
 * Relations are held too, with the meta `graph_changes` count they were read at: a search that
 * finds the count moved reads its relations in SQL and has them all read again afterwards.
 *
 * Memory: the text, its word lists and the relations take about 2.8 KB of heap per entity of the
 * latency benchmark's graphs (5 observations of 8-24 words, one relation each): 28 MB at 10k
 * entities, about 140 MB at MAX_ENTITIES. Built in 0.5-0.8 s at 10k, in steps of about 20 ms. An
 * entity with text outside ASCII also holds its observations folded (HeldEntity.observations), about
 * their size again (that benchmark's text is ASCII).
 */
import { foldAccents, isAscii } from '../../../core/text/fold.js';
import type { Entity, Relation } from '../../../core/types.js';
import type { SqliteConnection } from '../sqlite-connection.js';
import { json } from '../sqlite-connection.js';
import { toRelation, type RelationRow } from '../../rows.js';

/** Over this many entities the index would hold over 140 MB: SQL answers. */
export const MAX_ENTITIES = 50_000;
/** Entities read per build step: about 20 ms of the event loop (about 40 µs an entity of the latency benchmark). */
const BUILD_STEP = 500;
/** A replay of more changed entities than this share of the graph (or a pruned log) rebuilds. */
const REBUILD_SHARE = 0.25;
/** Separates the words in the string searched for queries shorter than GRAM. */
const SEP = '\u0001';
/** Length of the pieces of words indexed for the word look-up (UTF-16 code units, as includes() compares). */
const GRAM = 3;
const WHITESPACE = /\s/u;
const SPLIT = /\s+/u;

/**
 * An entity as held: its answer (frozen: shared by every answer that returns it) and its name and
 * type folded (fold.ts) for the tiers.
 */
export interface HeldEntity {
  readonly entity: Entity;
  readonly name: string;
  readonly type: string;
  /**
   * Its observations folded and joined by newlines (a query here has no whitespace, so it cannot
   * match across two), when one of them is not ASCII: folding such text costs about 2.8 µs per 100
   * characters, seven times lower-casing, and a broad search tests thousands. Undefined for ASCII
   * text, which folds by lower-casing alone and is not held twice.
   */
  readonly observations: string | undefined;
  /**
   * Listed again by a replay, after a change: words of its old text may still list it, so a search
   * tests its text. An entity listed by the build is a candidate through its current words only, so
   * one whose name and type lack the query holds it in an observation, with no test needed.
   */
  readonly replayed: boolean;
}

interface Built {
  readonly entities: Map<number, HeldEntity>;
  /** Word ids by folded word. */
  readonly ids: Map<string, number>;
  readonly words: string[];
  /** Entity ids per word id, in no order, possibly repeated or stale after a replay. */
  readonly holders: number[][];
  /** Word ids by each GRAM-long piece of the word, for queries of GRAM or more. */
  readonly grams: Map<string, number[]>;
  /** Entity-word pairs listed by the build, and by replays since (stale ones among them). */
  pairs: number;
  replayed: number;
  /** For shorter queries: SEP + the words joined by SEP, and each word's start in it, made on demand. */
  haystack?: { text: string; starts: Int32Array };
}

export class SubstringIndex {
  private built: Built | undefined;
  private seq = 0;
  private building = false;
  /** The graph turned out larger than MAX_ENTITIES while being built: SQL answers from then on. */
  private oversized = false;
  /** meta `graph_changes` when the index last caught up: while it stands, nothing changed. */
  private changesSeen = -1;
  /** meta `graph_changes` as the search under way read it. */
  private changesNow = -1;
  /**
   * Every relation (frozen, in creation order) and their positions there by each endpoint's name,
   * as of meta `graph_changes` = `changes`.
   */
  private relations: { readonly changes: number; readonly all: readonly Relation[]; readonly byName: Map<string, number[]> } | undefined;
  private relationsPending = false;
  /** Searches this index answered, and relation look-ups it answered (for tests and diagnostics). */
  answered = 0;
  relationAnswers = 0;

  constructor(private readonly conn: SqliteConnection) {}

  /**
   * The entities whose name, type or an observation contains `q` (already folded: fold.ts), with
   * perhaps a few that no longer do (test them), in creation order; undefined when this index
   * cannot answer (whitespace in the query, not built yet, graph too large) and SQL must.
   */
  candidates(q: string): HeldEntity[] | undefined {
    if (q === '' || WHITESPACE.test(q) || q.includes(SEP)) return undefined;
    const built = this.current();
    if (built === undefined) return undefined;
    const ids: number[] = [];
    const add = (word: number): void => {
      for (const id of built.holders[word] ?? []) ids.push(id);
    };
    if (q.length >= GRAM) {
      // The words holding the query's rarest GRAM-long piece, each tested whole.
      let fewest: readonly number[] | undefined;
      for (let i = 0; i + GRAM <= q.length; i++) {
        const words = built.grams.get(q.slice(i, i + GRAM)) ?? [];
        if (fewest === undefined || words.length < fewest.length) fewest = words;
      }
      for (const word of fewest ?? []) if ((built.words[word] as string).includes(q)) add(word);
    } else {
      const { text, starts } = (built.haystack ??= haystack(built.words));
      for (let at = text.indexOf(q); at >= 0;) {
        const word = wordAt(starts, at);
        add(word);
        // One hit per word is enough: go on from the next word's start.
        const next = starts[word + 1];
        if (next === undefined) break;
        at = text.indexOf(q, next);
      }
    }
    this.answered++;
    const entities: HeldEntity[] = [];
    for (const id of sortedDistinct(ids)) {
      const held = built.entities.get(id);
      if (held !== undefined) entities.push(held);
    }
    return entities;
  }

  /**
   * Starts the build now (a server at start), unless it is built or being built; resolves when no
   * build is under way (built, or left to SQL: too large, or the database busy), for callers that
   * want to time searches on a ready index.
   */
  warm(): Promise<void> {
    if (this.built === undefined) this.startBuild();
    return new Promise((resolve) => {
      const check = (): void => void (this.building ? setTimeout(check, 10) : resolve());
      check();
    });
  }

  /**
   * Relations with an endpoint among these names, in creation order, from memory; undefined (and a
   * read of them all started, off the answer's path) when the graph changed since they were read.
   * Call after candidates(), in the same search.
   */
  relationsTouching(names: readonly string[]): Relation[] | undefined {
    const held = this.relations;
    if (held === undefined || held.changes !== this.changesNow) {
      this.readRelations();
      return undefined;
    }
    const at: number[] = [];
    for (const name of names) for (const i of held.byName.get(name) ?? []) at.push(i);
    this.relationAnswers++;
    return sortedDistinct(at).map((i) => held.all[i] as Relation);
  }

  /** The index caught up with the log; undefined (and a build started) when there is none yet. */
  private current(): Built | undefined {
    const built = this.built;
    if (built === undefined) return this.startBuild();
    // Every graph write in any process adds to graph_changes (SqliteConnection.write), after it
    // logs its keyword changes: read first, it tells whether there is anything to replay.
    const changes = (this.changesNow = Number(this.conn.metaGet('graph_changes') ?? 0));
    if (changes === this.changesSeen) return built;
    const latest = this.latestSeq();
    if (latest === this.seq) {
      this.changesSeen = changes;
      return built;
    }
    const changed = this.conn.keywordChangesSince(this.seq, latest);
    const size = this.conn.entityCount();
    // A rebuild when the log no longer reaches back, the replay would cost more than a build, the
    // graph outgrew the index, or stale words make up too much of it.
    if (
      changed === undefined ||
      changed.length > Math.max(1000, size * REBUILD_SHARE) ||
      size > MAX_ENTITIES ||
      built.replayed > Math.max(10_000, built.pairs * REBUILD_SHARE)
    ) {
      this.built = undefined;
      return this.startBuild();
    }
    for (const id of changed) built.entities.delete(id); // gone unless read again below
    built.replayed += list(built, this.conn.stmt<[string], Text>(textsOf(BY_IDS)).all(json(changed)), true);
    this.seq = latest;
    this.changesSeen = changes;
    return built;
  }

  private latestSeq(): number {
    return this.conn.stmt<[], { s: number | null }>('SELECT max(seq) AS s FROM keyword_log').get()?.s ?? 0;
  }

  /**
   * Starts a build: its first step at once (a graph of one step is then built, and returned to the
   * search that asked), the rest in steps between other work, SQL answering meanwhile.
   */
  private startBuild(): Built | undefined {
    if (this.building || this.oversized || !this.conn.db.open || this.conn.entityCount() > MAX_ENTITIES) return undefined;
    const fresh = empty();
    let seq: number;
    let after: number;
    try {
      // What changes from here on is replayed from the log by the first search after the build.
      seq = this.latestSeq();
      after = this.readStep(fresh, 0);
    } catch {
      return undefined; // a busy database: SQL answers this search, and the next one tries again
    }
    if (fresh.entities.size < BUILD_STEP) {
      this.finish(fresh, seq);
      return fresh;
    }
    this.building = true;
    const step = (): void => {
      try {
        if (!this.conn.db.open) return void (this.building = false);
        after = this.readStep(fresh, after);
        // The entity count in meta said the graph was small enough; it was not (an older file).
        if (fresh.entities.size > MAX_ENTITIES) return void ((this.oversized = true), (this.building = false));
        if (after >= 0) return void setImmediate(step);
        this.finish(fresh, seq);
      } catch {
        // A busy or closed database: SQL answers, and the next search tries again.
        this.building = false;
      }
    };
    setImmediate(step);
    return undefined;
  }

  /** Reads the next BUILD_STEP entities after id `after`; returns the last id read, or -1 at the end. */
  private readStep(built: Built, after: number): number {
    const rows = this.conn.stmt<[number, number], Text>(textsOf(AFTER)).all(after, BUILD_STEP);
    built.pairs += list(built, rows, false);
    return rows.length === 0 ? -1 : (rows[rows.length - 1] as Text).id;
  }

  private finish(fresh: Built, seq: number): void {
    this.building = false;
    this.built = fresh;
    this.seq = seq;
    this.changesSeen = -1;
    this.readRelations();
  }

  /** Reads every relation with the graph_changes they are current for, once the event loop is free. */
  private readRelations(): void {
    if (this.relationsPending) return;
    this.relationsPending = true;
    setImmediate(() => {
      this.relationsPending = false;
      try {
        if (!this.conn.db.open) return;
        const read = () => ({
          changes: Number(this.conn.metaGet('graph_changes') ?? 0),
          rows: this.conn
            .stmt<[], RelationRow>('SELECT from_name, to_name, relation_type, context, ended_at FROM relations ORDER BY id')
            .all()
            .map(toRelation),
        });
        const { changes, rows } = this.conn.db.inTransaction ? read() : this.conn.db.transaction(read)();
        const byName = new Map<string, number[]>();
        rows.forEach((r, i) => {
          Object.freeze(r);
          for (const name of r.from === r.to ? [r.from] : [r.from, r.to]) {
            const list = byName.get(name);
            if (list === undefined) byName.set(name, [i]);
            else list.push(i);
          }
        });
        this.relations = { changes, all: rows, byName };
      } catch {
        // A busy or closed database: SQL answers, and the next search tries again.
      }
    });
  }
}

/** A row of an entity's text: part 0 its name, 1 its type, 2 an observation. */
interface Text {
  readonly id: number;
  readonly part: number;
  readonly text: string;
}

const BY_IDS = 'SELECT id, name, entity_type FROM entities WHERE id IN (SELECT value FROM json_each(?))';
const AFTER = 'SELECT id, name, entity_type FROM entities WHERE id > ? ORDER BY id LIMIT ?';
/** The text of the entities `entities` selects: each entity's rows together, observations in id order. */
const textsOf = (entities: string): string =>
  `WITH e AS (${entities})
   SELECT id, part, text FROM (SELECT id, 0 AS part, 0 AS o, name AS text FROM e UNION ALL SELECT id, 1, 0, entity_type FROM e
     UNION ALL SELECT ob.entity_id, 2, ob.id, ob.content FROM e JOIN observations ob ON ob.entity_id = e.id)
   ORDER BY id, part, o`;

const empty = (): Built => ({ entities: new Map(), ids: new Map(), words: [], holders: [], grams: new Map(), pairs: 0, replayed: 0 });

/**
 * Keeps each entity's text and lists its folded words; returns how many entity-word pairs were
 * listed. `replayed` when the entities changed since they were last listed (HeldEntity.replayed).
 */
function list(built: Built, rows: readonly Text[], replayed: boolean): number {
  let listed = 0;
  let entity: { name: string; entityType: string; observations: string[] } | undefined;
  let held: { id: number; name: string; type: string; observations: string[]; ascii: boolean } | undefined;
  const done = (): void => {
    if (entity === undefined || held === undefined) return;
    Object.freeze(entity.observations);
    Object.freeze(entity);
    const observations = held.ascii ? undefined : held.observations.join('\n');
    built.entities.set(held.id, { entity, name: held.name, type: held.type, observations, replayed });
  };
  for (const { id, part, text } of rows) {
    // Folded whole, as the test folds it (toLowerCase is context-sensitive), then split below.
    const folded = foldAccents(text);
    if (part === 0) {
      done();
      entity = { name: text, entityType: '', observations: [] };
      held = { id, name: folded, type: '', observations: [], ascii: true };
    } else if (entity !== undefined && held !== undefined && part === 1) {
      entity.entityType = text;
      held.type = folded;
    } else if (entity !== undefined && held !== undefined) {
      entity.observations.push(text);
      held.observations.push(folded);
      if (held.ascii && !isAscii(text)) held.ascii = false;
    }
    for (const word of folded.split(SPLIT)) {
      if (word === '') continue;
      let w = built.ids.get(word);
      if (w === undefined) {
        w = built.words.length;
        built.ids.set(word, w);
        built.words.push(word);
        built.holders.push([]);
        built.haystack = undefined;
        for (let i = 0; i + GRAM <= word.length; i++) {
          const gram = word.slice(i, i + GRAM);
          const words = built.grams.get(gram);
          if (words === undefined) built.grams.set(gram, [w]);
          else if (words[words.length - 1] !== w) words.push(w);
        }
      }
      const holders = built.holders[w] as number[];
      // An entity's rows come together (ORDER BY id): its repeats of a word are skipped here.
      if (holders[holders.length - 1] !== id) {
        holders.push(id);
        listed++;
      }
    }
  }
  done();
  return listed;
}

/** Numbers in increasing order, each once. */
function sortedDistinct(xs: readonly number[]): number[] {
  const sorted = Float64Array.from(xs).sort();
  const out: number[] = [];
  for (const x of sorted) if (out.length === 0 || out[out.length - 1] !== x) out.push(x);
  return out;
}

function haystack(words: readonly string[]): { text: string; starts: Int32Array } {
  const starts = new Int32Array(words.length);
  let at = 1;
  for (let i = 0; i < words.length; i++) {
    starts[i] = at;
    at += (words[i] as string).length + 1;
  }
  return { text: SEP + words.join(SEP), starts };
}

/** The word whose text holds position `at` of the haystack (binary search of the starts). */
function wordAt(starts: Int32Array, at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
