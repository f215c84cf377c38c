/**
 * Schema migrations, keyed by `PRAGMA user_version`. Each step runs in one transaction; a database
 * made by a newer Limbic is refused instead of being guessed at.
 */
import { randomInt } from 'node:crypto';
import type Database from 'better-sqlite3';
import { ERROR_CODES, MemoryError } from '../../core/errors.js';
import { foldAccents, planNfcRenames, relationEnd, toNfc } from '../../core/text/fold.js';
import { recountTotals } from './fts5/fts5-totals.js';

/** A step: SQL, or a function where JavaScript must compute the new values (Unicode forms). */
type Migration = string | ((db: Database.Database) => void);

const MIGRATIONS: readonly Migration[] = [
  // 1: the knowledge graph, signals and keyword indexes.
  `
  CREATE TABLE entities (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    entity_type TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'activo'
                CHECK (status IN ('activo', 'pausado', 'completado', 'archivado')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
  );

  CREATE TABLE observations (
    id            INTEGER PRIMARY KEY,
    entity_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    content       TEXT NOT NULL,
    kind          TEXT NOT NULL DEFAULT 'generic',
    created_at    INTEGER NOT NULL,
    -- Reserved for versioned observations; deletes are real deletes today.
    superseded_at INTEGER,
    UNIQUE (entity_id, content)
  );

  -- Endpoints are names, not ids: the official contract allows relations to entities that do not
  -- exist (yet), and they must survive export and import.
  CREATE TABLE relations (
    id            INTEGER PRIMARY KEY,
    from_name     TEXT NOT NULL,
    to_name       TEXT NOT NULL,
    relation_type TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (from_name, to_name, relation_type)
  );
  CREATE INDEX relations_to ON relations(to_name);

  CREATE TABLE entity_access (
    entity_id    INTEGER PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    access_count INTEGER NOT NULL DEFAULT 1,
    last_access  INTEGER NOT NULL
  );

  CREATE TABLE entity_access_days (
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    day       TEXT NOT NULL,
    PRIMARY KEY (entity_id, day)
  ) WITHOUT ROWID;

  CREATE TABLE co_occurrences (
    entity_a_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    entity_b_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    co_count    INTEGER NOT NULL DEFAULT 1,
    last_co     INTEGER NOT NULL,
    PRIMARY KEY (entity_a_id, entity_b_id),
    CHECK (entity_a_id < entity_b_id)
  ) WITHOUT ROWID;
  CREATE INDEX co_occurrences_b ON co_occurrences(entity_b_id);

  -- BM25 over name, type and observations joined by " | ", rowid = entities.id,
  -- kept in sync by code. unicode61 with remove_diacritics folds accents so "sesion" finds "Sesión";
  -- the porter stemmer on top lifted the keyword leg's LoCoMo recall@5 from 0.439 to 0.472
  -- (bench/quality) and leaves XQuAD es→es unchanged.
  CREATE VIRTUAL TABLE entity_fts USING fts5(
    name, entity_type, obs_text,
    tokenize = 'porter unicode61 remove_diacritics 2',
    content = '', contentless_delete = 1
  );

  -- Substring index for search_nodes (the official contract is a case-insensitive substring test).
  CREATE VIRTUAL TABLE entity_trigram USING fts5(
    name, entity_type, obs_text,
    tokenize = 'trigram case_sensitive 0',
    content = '', contentless_delete = 1
  );

  -- Entities whose text changed and whose vector must be remade. version grows on every change, so
  -- a change made while a batch is being embedded is not lost.
  CREATE TABLE embedding_queue (
    entity_id INTEGER PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    version   INTEGER NOT NULL
  );

  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 2: a log of vector writes, replayed by each process's in-memory vector cache (vector-cache.ts).
  `
  CREATE TABLE vector_log (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    entity_id INTEGER NOT NULL
  );

  -- Document frequency of each keyword term, so terms in most entities (no BM25 weight) are pruned.
  CREATE VIRTUAL TABLE entity_fts_vocab USING fts5vocab(entity_fts, 'row');

  -- Entity count kept by the writers: count(*) scans the table, this is read per search.
  INSERT INTO meta (key, value) SELECT 'entity_count', count(*) FROM entities WHERE true
    ON CONFLICT(key) DO UPDATE SET value = excluded.value;
  `,
  // 3: the re-ranker reads each candidate's share of metadata observations; this index answers it
  // without reading observation rows (almost always: none).
  `
  CREATE INDEX observations_metadata ON observations(entity_id) WHERE kind = 'metadata';
  `,
  // 4: an identity for this database, written into the vector cache file next to it
  // (vector-cache-file.ts), so a file that ends up next to another database is not trusted.
  `
  INSERT INTO meta (key, value) VALUES ('database_id', lower(hex(randomblob(16)))) ON CONFLICT(key) DO NOTHING;
  `,
  // 5: the tuner's shadow log (sqlite-tuning.ts): each logged search, and its candidates with every
  // factor of their score, so a search replays under other parameters. Relevance is set when a
  // candidate is opened later. Entities are not foreign keys: a deleted entity's past searches
  // still say how the ranking did.
  `
  CREATE TABLE tuning_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
    tool        TEXT NOT NULL,
    query_hash  TEXT NOT NULL,
    fusion      TEXT NOT NULL,
    legs        INTEGER NOT NULL,
    strategy    TEXT NOT NULL,
    page_offset INTEGER NOT NULL,
    shown       INTEGER NOT NULL,
    gamma       REAL NOT NULL,
    beta_sal    REAL NOT NULL,
    rrf_k       REAL NOT NULL,
    rrf_k_pinned INTEGER NOT NULL
  );
  -- An open looks for the searches of the last hour (sqlite-tuning.ts recordFeedback). No index by
  -- entity on the candidates: it tripled the cost of logging a search (0.4 -> 1.7 ms for 50 rows).
  CREATE INDEX tuning_events_at ON tuning_events(at);

  CREATE TABLE tuning_candidates (
    event_id      INTEGER NOT NULL REFERENCES tuning_events(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    entity_id     INTEGER NOT NULL,
    base          REAL NOT NULL,
    semantic_rank INTEGER,
    keyword_rank  INTEGER,
    graph_part    REAL NOT NULL,
    importance    REAL NOT NULL,
    temporal      REAL NOT NULL,
    cooc          REAL NOT NULL,
    multiplier    REAL NOT NULL,
    relevance     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (event_id, position)
  ) WITHOUT ROWID;
  `,
  // 6: a log of keyword-row rewrites, replayed by each process's in-memory top-k keyword index
  // (keyword-topk-sync.ts), as vector_log is by the vector cache.
  `
  CREATE TABLE keyword_log (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    entity_id INTEGER NOT NULL
  );
  `,
  // 7: maintenance (sqlite-maintenance.ts). A superseded observation moves to its own table, so every
  // read of `observations` (read_graph, search_nodes, keyword rows, embedding text, ranking) leaves it
  // out without a filter each; open_nodes with include_superseded reads it back. An ended relation
  // keeps its row (read_graph still lists it) and stops counting for ranking (degree, graph boost).
  `
  CREATE TABLE superseded_observations (
    id            INTEGER PRIMARY KEY,
    entity_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    content       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    superseded_at INTEGER NOT NULL,
    superseded_by TEXT NOT NULL
  );
  CREATE INDEX superseded_observations_entity ON superseded_observations(entity_id);
  ALTER TABLE relations ADD COLUMN ended_at INTEGER;
  `,
  // 8: the shadow log records hybrid_search's reflection options, and which candidates the
  // reflection boost multiplied, so a replay ranks as the search did (core/tune/shadow.ts).
  `
  ALTER TABLE tuning_events ADD COLUMN reflection_boost REAL NOT NULL DEFAULT 1;
  ALTER TABLE tuning_events ADD COLUMN reflections TEXT NOT NULL DEFAULT 'included';
  ALTER TABLE tuning_candidates ADD COLUMN boosted INTEGER NOT NULL DEFAULT 0;
  `,
  // 9: open_nodes credits the newest logged search that listed an entity (sqlite-tuning.ts
  // recordFeedback): found by entity here, not by reading every search of the last hour (10-20 ms
  // an opened entity with 1-2k searches logged, which stalled an HTTP server under load).
  `
  CREATE INDEX tuning_candidates_entity ON tuning_candidates(entity_id, event_id);
  `,
  // 10: usage counts uses only (issue 24). Until now every search counted an access for everything
  // it listed and a co-occurrence for every pair of it, so these counters measure exposure, which
  // the old re-rank fed back into itself; no use can be told apart in them. They start over: the
  // uses recorded from here on (opened, extended, related) are what ranking reads.
  `
  DELETE FROM co_occurrences;
  DELETE FROM entity_access_days;
  DELETE FROM entity_access;
  `,
  // 11: every log row carries a random nonce, and the side files (<db>.keywords, <db>.vectors) the
  // mark of the row they reflect (sqlite-connection.ts logMark): after a restored copy of the
  // database writes again, the row at the same position is another row, however alike (issue 26).
  `
  ALTER TABLE keyword_log ADD COLUMN nonce INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE vector_log ADD COLUMN nonce INTEGER NOT NULL DEFAULT 0;
  `,
  // 12 (issue 25): a relation's optional context, the seed system's free text on why it holds (NULL
  // for every relation made before). And observation kinds go into the keyword rows
  // (sqlite-graph.ts syncEntity): the entities with a kind other than generic are listed for their
  // rows to be rebuilt once, in code, when the store opens (resyncListedKeywords).
  `
  ALTER TABLE relations ADD COLUMN context TEXT;
  CREATE TABLE keyword_resync (entity_id INTEGER PRIMARY KEY);
  INSERT INTO keyword_resync (entity_id) SELECT DISTINCT entity_id FROM observations WHERE kind <> 'generic';
  `,
  // 13: the embedding queue is claimed and fair (issue 26; sqlite-vectors.ts takeJobs). A process
  // takes jobs under a lease (claimed_until, ms; claimed_by, its token), so processes sharing the
  // file embed different entities, and a killed one's jobs are taken again (at once when its
  // process is gone, else when the lease runs out). Jobs go oldest queued first (queued_at, ms), and
  // one that changed while it was being embedded goes behind the others instead of holding the
  // head. Rows queued before this go first (0).
  `
  ALTER TABLE embedding_queue ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE embedding_queue ADD COLUMN claimed_until INTEGER;
  ALTER TABLE embedding_queue ADD COLUMN claimed_by INTEGER;
  CREATE INDEX embedding_queue_order ON embedding_queue(queued_at);
  CREATE INDEX embedding_queue_claims ON embedding_queue(claimed_by) WHERE claimed_by IS NOT NULL;
  `,
  // 14: names and text in NFC, and search_nodes' substring index folded (issue 26, fold.ts). Every
  // tool now stores text in NFC; what was stored in another form is brought to it here, so the
  // names a client types still find it. An entity whose NFC name another entity already holds
  // keeps both apart under the first free "Name (2)" (planNfcRenames); relation ends follow their
  // entity; an observation that equals another of its entity once in NFC was the same text and is
  // dropped. The keyword rows are unchanged (unicode61 drops combining marks either way), but the
  // renamed entities are logged so every process's in-memory indexes read them again.
  (db) => {
    // Only the rows to change are read into memory; the test runs in SQL, row by row.
    db.function('limbic_not_nfc', { deterministic: true }, (text: unknown) => (toNfc(String(text)) === text ? 0 : 1));
    const changed = new Set<number>();
    const entities = db.prepare<[], { id: number; name: string }>('SELECT id, name FROM entities ORDER BY id').all();
    const renames = planNfcRenames(entities.map((e) => e.name));
    const rename = db.prepare<[string, number]>('UPDATE entities SET name = ? WHERE id = ?');
    for (const e of entities) {
      const to = renames.get(e.name);
      if (to === undefined) continue;
      rename.run(to, e.id);
      changed.add(e.id);
    }
    const relations = db.prepare<[], { id: number; from_name: string; to_name: string; relation_type: string }>(
      'SELECT id, from_name, to_name, relation_type FROM relations WHERE limbic_not_nfc(from_name) OR limbic_not_nfc(to_name) OR limbic_not_nfc(relation_type) ORDER BY id',
    );
    const moveRelation = db.prepare<[string, string, string, number]>(
      'UPDATE OR IGNORE relations SET from_name = ?, to_name = ?, relation_type = ? WHERE id = ?',
    );
    const dropRelation = db.prepare<[number]>('DELETE FROM relations WHERE id = ?');
    // A renamed name is not in NFC, so its relations are among these.
    for (const r of relations.all()) {
      const next = [relationEnd(renames, r.from_name), relationEnd(renames, r.to_name), toNfc(r.relation_type)] as const;
      if (next[0] === r.from_name && next[1] === r.to_name && next[2] === r.relation_type) continue;
      // Ignored when the NFC relation exists already: then this one was a copy of it.
      if (moveRelation.run(...next, r.id).changes === 0) dropRelation.run(r.id);
    }
    const observations = db.prepare<[], { id: number; entity_id: number; content: string }>(
      'SELECT id, entity_id, content FROM observations WHERE limbic_not_nfc(content) ORDER BY id',
    );
    const moveObservation = db.prepare<[string, number]>('UPDATE OR IGNORE observations SET content = ? WHERE id = ?');
    const dropObservation = db.prepare<[number]>('DELETE FROM observations WHERE id = ?');
    for (const o of observations.all()) {
      const nfc = toNfc(o.content);
      if (nfc === o.content) continue;
      if (moveObservation.run(nfc, o.id).changes === 0) dropObservation.run(o.id);
      changed.add(o.entity_id);
    }
    const superseded = db.prepare<[], { id: number; content: string }>(
      'SELECT id, content FROM superseded_observations WHERE limbic_not_nfc(content)',
    );
    const moveSuperseded = db.prepare<[string, number]>('UPDATE superseded_observations SET content = ? WHERE id = ?');
    for (const s of superseded.all()) if (toNfc(s.content) !== s.content) moveSuperseded.run(toNfc(s.content), s.id);
    // The substring index again, folded as search_nodes now compares (sqlite-graph.ts syncEntity).
    db.exec("INSERT INTO entity_trigram (entity_trigram) VALUES ('delete-all')");
    const TEXT = `SELECT e.id, e.name, e.entity_type, (SELECT group_concat(content, ' | ' ORDER BY id) FROM observations o WHERE o.entity_id = e.id) AS obs
                    FROM entities e`;
    type Text = { id: number; name: string; entity_type: string; obs: string | null };
    const texts = db.prepare<[number], Text>(`${TEXT} WHERE e.id > ? ORDER BY e.id LIMIT 1000`);
    const insert = db.prepare<[number, string, string, string]>(
      'INSERT INTO entity_trigram (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)',
    );
    for (let batch = texts.all(0); batch.length > 0; batch = texts.all(batch[batch.length - 1]?.id ?? Infinity)) {
      for (const t of batch) insert.run(t.id, foldAccents(t.name), foldAccents(t.entity_type), foldAccents(t.obs ?? ''));
    }
    // A changed entity's keyword row again (a dropped copy leaves it), its vector queued, and the
    // change logged for every process's in-memory indexes, as sqlite-graph.ts syncEntity does.
    // The keyword row as syncEntity writes it: an observation of a kind other than generic with its
    // kind in front (entity-text.ts keywordObservation).
    const text = db.prepare<[number], Text>(
      `SELECT e.id, e.name, e.entity_type, (SELECT group_concat(CASE WHEN kind = 'generic' THEN content ELSE '[' || kind || '] ' || content END, ' | ' ORDER BY id) FROM observations o WHERE o.entity_id = e.id) AS obs
         FROM entities e WHERE e.id = ?`,
    );
    const dropKeywords = db.prepare<[number]>('DELETE FROM entity_fts WHERE rowid = ?');
    const keywords = db.prepare<[number, string, string, string]>(
      'INSERT INTO entity_fts (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)',
    );
    const queue = db.prepare<[number, number]>(
      'INSERT INTO embedding_queue (entity_id, version) VALUES (?, ?) ON CONFLICT(entity_id) DO UPDATE SET version = excluded.version',
    );
    const log = db.prepare<[number]>('INSERT INTO keyword_log (entity_id, nonce) VALUES (?, (random() & 1048575))');
    for (const id of changed) {
      const t = text.get(id);
      if (t === undefined) continue;
      dropKeywords.run(id);
      keywords.run(id, t.name, t.entity_type, t.obs ?? '');
      queue.run(id, randomInt(1, 2 ** 47));
      log.run(id);
    }
    db.prepare(
      "INSERT INTO meta (key, value) VALUES ('keyword_changes', ?) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value",
    ).run(changed.size);
  },
  // 15 (issue 34): the project an entity belongs to (src/capture/project.ts: a git remote's key, or a
  // folder's path). Captured conversations and their project entities have one; everything written
  // through the tools stays global (NULL). Searches from inside a project leave out other projects'
  // entities (pipeline.ts); the brief and `limbic projects` read a project's entities by this index.
  `
  ALTER TABLE entities ADD COLUMN project TEXT;
  CREATE INDEX entities_project ON entities(project, updated_at) WHERE project IS NOT NULL;
  `,
  // 16 (issue 35): FTS5 never took a rewritten or deleted entity's keyword row off the row count
  // and token totals bm25() reads (contentless_delete: fts5-totals.ts); from now on each commit does.
  // The totals a memory gathered so far are recounted once from the rows the table holds.
  (db) => recountTotals(db, 'entity_fts'),
  // 17 (issue 37): re-finding pairs (sqlite-usage.ts recordRefinding): the vector of a query after
  // which the agent used an entity (never its text), for the re-finding lift (docs/ranking.md).
  // Cleared with the entity; not exported; bounded per entity and in all by the writer.
  `
  CREATE TABLE refind_pairs (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    at        INTEGER NOT NULL,
    model     TEXT NOT NULL,
    vector    BLOB NOT NULL
  );
  CREATE INDEX refind_pairs_entity ON refind_pairs(entity_id, at);
  -- The shadow log keeps each candidate's re-finding score, so the tuner replays the lift as served.
  ALTER TABLE tuning_candidates ADD COLUMN refind REAL NOT NULL DEFAULT 0;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new MemoryError(
      ERROR_CODES.STORE_FAILED,
      `This database was written by a newer Limbic (schema ${current}, this one knows ${SCHEMA_VERSION}). Upgrade Limbic to open it.`,
    );
  }
  for (let version = current; version < SCHEMA_VERSION; version++) {
    const step = db.transaction(() => {
      // Another process may have migrated while we waited for the write lock.
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now > version) return;
      const migration = MIGRATIONS[version] ?? '';
      if (typeof migration === 'string') db.exec(migration);
      else migration(db);
      db.pragma(`user_version = ${version + 1}`);
    });
    step.immediate();
  }
}
