/**
 * Keeps this process's top-k keyword index (keyword-topk.ts) in step with the FTS5 table it
 * mirrors, as the vector cache does with its table: every writer, in any process, appends the
 * entity to `keyword_log` when it rewrites its keyword rows, and each search first replays what was
 * logged since the index's position. A log pruned past that position, or a replay larger than a
 * rebuild, means a rebuild.
 *
 * Terms come from FTS5 itself, never from a tokenizer re-written here: the build reads the index's
 * `instance` vocabulary (every term of every entity, in term order), and a changed entity's text is
 * put through a temporary FTS5 table with the same tokenize string. The corpus statistics bm25()
 * uses are read from FTS5's averages record at each search.
 */
import { unlink } from 'node:fs/promises';
import { readKeywordFile, saveKeywordFile } from './keyword-topk-file.js';
import { KeywordTopK, type CorpusStats, type DocTerms, type TopKHit } from './keyword-topk.js';
import { logMark, type SqliteConnection } from '../sqlite-connection.js';
import { keywordObservation } from '../../../core/text/entity-text.js';

/** The tokenize string of entity_fts (schema.ts); the temporary table must split text the same way. */
const TOKENIZE = `'porter unicode61 remove_diacritics 2'`;
/** Joins observations in the keyword text, as sqlite-graph.ts's syncEntity does. */
const OBS_SEPARATOR = ' | ';
/** The `%_data` rowid of FTS5's averages record (FTS5_AVERAGES_ROWID in fts5_index.c). */
const AVERAGES_ROWID = 1;
/** A replay of more than this share of the entities rebuilds instead. */
const REBUILD_SHARE = 0.25;
/** A build step holds the event loop about this long (ms): terms per step adapt to it. */
const BUILD_STEP_MS = 10;
/** Entities tokenized per statement batch while replaying. */
const TOKENIZE_BATCH = 500;

export class KeywordTopKSync {
  private index: KeywordTopK | undefined;
  private seq = 0;
  private tempReady = false;
  /** The build under way, if any. */
  private building: Promise<void> | undefined;
  /** Why the last build failed; searches then throw it. */
  private failure: Error | undefined;
  private closed = false;
  /** Times the index was built from the FTS5 vocabulary (for tests and diagnostics). */
  builds = 0;
  /** How long the last build took, ms (steps and the pauses between them). */
  lastBuildMs = 0;
  /** Entities that changed during the last build, replayed at its end. */
  lastBuildReplayed = 0;

  /** Where the index came from at its last start ('file' or 'build'), for tests and diagnostics. */
  loadedFrom: 'file' | 'build' | undefined;
  /** Why the file was not used at the last start, when there was one. */
  fileRejected: string | undefined;
  /** The log position the file on disk reflects (-1: none written by this process). */
  private savedSeq = -1;
  private saving: Promise<void> | undefined;

  /**
   * `file`: where the index is saved between starts (keyword-topk-file.ts; none for `:memory:`).
   * Small `mergeMin` (see KeywordTopK) and `buildStep` make merges and multi-step builds happen in tests.
   */
  constructor(
    private readonly conn: SqliteConnection,
    private readonly tuning: { readonly file?: string; readonly mergeMin?: number; readonly buildStep?: number } = {},
  ) {}

  /**
   * The best `k` for an OR of single-term phrases, after catching up with every writer's changes;
   * undefined while the index is being built (FTS5 answers meanwhile), which the first call starts.
   */
  search(phrases: readonly string[], k: number): TopKHit[] | undefined {
    if (this.failure !== undefined) throw this.failure;
    if (this.index === undefined) {
      void this.startBuild();
      return undefined;
    }
    const db = this.conn.db;
    // One read snapshot for the log, the entities' text and the averages record.
    const read = (): { index: KeywordTopK | undefined; corpus: CorpusStats } => ({ index: this.current(), corpus: this.corpus() });
    const { index, corpus } = db.inTransaction ? read() : db.transaction(read)();
    if (index === undefined) return this.search(phrases, k); // set aside: rebuilding
    return index.search(phrases, k, corpus);
  }

  /**
   * Each stored term's document frequency as FTS5 counts it (the entities holding it), after
   * catching up with every writer's changes; undefined while the index is not ready (FTS5's
   * vocabulary answers meanwhile). A look-up per term, where fts5vocab reads the term's whole doclist.
   */
  docFrequencies(terms: readonly string[]): number[] | undefined {
    if (this.failure !== undefined || this.index === undefined) return undefined;
    const db = this.conn.db;
    const index = db.inTransaction ? this.current() : db.transaction(() => this.current())();
    if (index === undefined) {
      void this.startBuild(); // set aside: rebuilding, as a search would
      return undefined;
    }
    return terms.map((t) => index.docFrequency(t));
  }

  /** Builds now (or waits for the build under way), so searches find the index ready. */
  async warm(): Promise<void> {
    while (this.index === undefined && this.failure === undefined && !this.closed) await this.startBuild();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Stops a build under way at its next step, and saves the index if it moved since it was saved. */
  async close(): Promise<void> {
    this.closed = true;
    await this.building;
    await this.saving;
    if (this.index !== undefined && this.seq !== this.savedSeq) await this.save().catch(() => undefined);
  }

  /** Saves the index (its delta merged) with its log position; skipped when the log entry there is gone. */
  private save(): Promise<void> {
    const file = this.tuning.file;
    const index = this.index;
    if (file === undefined || index === undefined) return Promise.resolve();
    const seq = this.seq;
    const seqEntity = this.markAt(seq);
    const databaseId = this.conn.metaGet('database_id');
    if (seqEntity === undefined || databaseId === undefined) return Promise.resolve();
    return saveKeywordFile(file, { seq, seqEntity, databaseId }, index).then(() => {
      this.savedSeq = seq;
    });
  }

  /** The index from the file when it is this database's and the log reaches back to it; false otherwise. */
  private async load(): Promise<boolean> {
    const file = this.tuning.file;
    const databaseId = this.conn.metaGet('database_id');
    if (file === undefined || databaseId === undefined) return false;
    const read = await readKeywordFile(file, databaseId, this.tuning.mergeMin);
    if (read.kind !== 'read') {
      this.fileRejected = read.kind === 'rejected' ? read.reason : undefined;
      // Damaged, foreign or of another format: removed at once, never read again (issue 26).
      if (read.kind === 'rejected') await unlink(file).catch(() => undefined);
      return false;
    }
    const { seq, seqEntity } = read.header;
    const db = this.conn.db;
    const adopted = db.transaction(() => {
      if (seq > this.latestSeq()) {
        this.fileRejected = 'it reflects a later state than this database holds (was the database restored from an older copy?)';
        return 'foreign';
      }
      const logged = this.markAt(seq);
      if (logged === undefined) {
        this.fileRejected = 'the keyword log no longer reaches back to it';
        return 'stale';
      }
      if (logged !== seqEntity) {
        this.fileRejected = 'the keyword log differs from it at its position (a restored or copied database wrote other rows there)';
        return 'foreign';
      }
      this.index = read.index;
      this.seq = seq;
      this.savedSeq = seq;
      if (this.current() === undefined) {
        this.fileRejected = 'the changes since it was saved are more than a rebuild';
        return 'stale';
      }
      this.loadedFrom = 'file';
      this.fileRejected = undefined;
      return 'adopted';
    })();
    if (adopted === 'foreign') await unlink(file).catch(() => undefined);
    return adopted === 'adopted';
  }

  /** The mark of the log row at `seq` (logMark), 0 at position 0, undefined when the row is gone. */
  private markAt(seq: number): number | undefined {
    if (seq === 0) return 0;
    const row = this.conn
      .stmt<[number], { id: number; nonce: number }>('SELECT entity_id AS id, nonce FROM keyword_log WHERE seq = ?')
      .get(seq);
    return row === undefined ? undefined : logMark(row.id, row.nonce);
  }

  private startBuild(): Promise<void> {
    this.building ??= (async () => {
      if (!(await this.load())) await this.buildInSteps();
    })()
      .catch((error: unknown) => {
        // Searches go to FTS5 from now on (SqliteKeywordIndex sets the index aside on this error).
        if (!this.closed) this.failure = error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => (this.building = undefined));
    return this.building;
  }

  /** Bytes and entities held (undefined before the first build). */
  memory(): { bytes: number; entities: number } | undefined {
    return this.index === undefined ? undefined : { bytes: this.index.bytes(), entities: this.index.size };
  }

  /** The index caught up with the log, or undefined when it had to be set aside for a rebuild. */
  private current(): KeywordTopK | undefined {
    const index = this.index;
    if (index === undefined) return undefined;
    const latest = this.latestSeq();
    if (latest === this.seq) return index;
    const ids = this.conn.keywordChangesSince(this.seq, latest);
    if (ids === undefined || ids.length > Math.max(1000, index.size * REBUILD_SHARE)) {
      this.index = undefined; // the log no longer reaches back, or a replay would cost more than a build
      return undefined;
    }
    for (let i = 0; i < ids.length; i += TOKENIZE_BATCH) {
      const batch = ids.slice(i, i + TOKENIZE_BATCH);
      const docs = this.tokenize(batch);
      for (const id of batch) index.update(id, docs.get(id));
    }
    this.seq = latest;
    return index;
  }

  private latestSeq(): number {
    return this.conn.stmt<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'keyword_log'").get()?.seq ?? 0;
  }

  /**
   * The whole index from FTS5's instance vocabulary, about BUILD_STEP_MS a step with the event loop
   * free between steps. Steps read different snapshots: an entity changed meanwhile may be read
   * half old, half new, but it is in the log after the position taken first, so it is hidden in
   * the base and replayed from its current text before the index answers.
   */
  private async buildInSteps(): Promise<void> {
    const started = performance.now();
    this.ensureTemp();
    const db = this.conn.db;
    const { from, maxId } = db.transaction(() => ({
      from: this.latestSeq(),
      maxId: this.conn.stmt<[], { m: number | null }>('SELECT max(id) AS m FROM entities').get()?.m ?? 0,
    }))();
    const index = new KeywordTopK(this.tuning.mergeMin);
    let perStep = this.tuning.buildStep ?? 256;
    const lengths = new Int32Array(maxId + 1);
    // One row per term, its entities as text (an entity once per occurrence, ascending): the
    // vocabulary table yields terms in order, so no sort, and one row per term instead of one per
    // occurrence (at 10k entities 0.27 s against 1.9 s reading the 830k occurrences as rows).
    const step = this.conn.stmt<[string, number], [string, string]>(
      "SELECT term, group_concat(doc, ',') FROM temp.topk_main_instance WHERE term > ? GROUP BY term LIMIT ?",
    );
    const ids: number[] = [];
    const tfs: number[] = [];
    let after = '';
    for (;;) {
      const stepStarted = performance.now();
      const rows = step.raw().all(after, perStep);
      for (const [term, docs] of rows) {
        ids.length = 0;
        tfs.length = 0;
        let doc = 0;
        for (let i = 0; i <= docs.length; i++) {
          const c = i < docs.length ? docs.charCodeAt(i) : 44;
          if (c !== 44) {
            doc = doc * 10 + (c - 48);
            continue;
          }
          if (doc < lengths.length) lengths[doc] = (lengths[doc] as number) + 1;
          const last = ids.length > 0 ? (ids[ids.length - 1] as number) : -1;
          if (last === doc) tfs[tfs.length - 1] = (tfs[tfs.length - 1] as number) + 1;
          else if (last > doc)
            throw new Error(`FTS5's vocabulary listed term "${term}" out of entity order; the keyword index cannot be built from it.`);
          else {
            ids.push(doc);
            tfs.push(1);
          }
          doc = 0;
        }
        if (ids.length > 0) index.addBaseTerm(term, ids, tfs);
        after = term;
      }
      if (rows.length < perStep) break;
      if (this.tuning.buildStep === undefined) {
        const took = performance.now() - stepStarted;
        perStep = Math.max(16, Math.min(65_536, Math.round(perStep * Math.min(4, Math.max(0.25, BUILD_STEP_MS / Math.max(took, 0.1))))));
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.closed) return;
    }
    db.transaction(() => {
      // Every entity has keyword rows, some with no token at all (a name of punctuation).
      for (const { id } of this.conn.stmt<[], { id: number }>('SELECT id FROM entities').iterate())
        index.setBaseLength(id, lengths[id] ?? 0);
      const changed = this.conn.stmt<[number], { id: number }>('SELECT DISTINCT entity_id AS id FROM keyword_log WHERE seq > ?').all(from);
      for (const { id } of changed) index.hide(id);
      this.lastBuildReplayed = changed.length;
      index.finishBase();
      this.index = index;
      this.seq = from;
      this.current(); // the entities changed during the build, from their current text
    })();
    this.builds++;
    this.loadedFrom = 'build';
    this.lastBuildMs = performance.now() - started;
    // Saved now, not only at close, so a process that is killed still leaves the next one a file.
    this.saving = this.save()
      .catch(() => undefined)
      .finally(() => (this.saving = undefined));
  }

  /** Changed entities' terms through FTS5's own tokenizer; entities no longer there are absent. */
  private tokenize(ids: readonly number[]): Map<number, DocTerms> {
    this.ensureTemp();
    const docs = new Map<number, { terms: Map<string, number>; length: number }>();
    const entity = this.conn.stmt<[number], { name: string; entity_type: string }>('SELECT name, entity_type FROM entities WHERE id = ?');
    const observations = this.conn.stmt<[number], { content: string; kind: string }>(
      'SELECT content, kind FROM observations WHERE entity_id = ? ORDER BY id',
    );
    const insert = this.conn.stmt('INSERT INTO temp.topk_docs (rowid, name, entity_type, obs_text) VALUES (?, ?, ?, ?)');
    for (const id of ids) {
      const row = entity.get(id);
      if (row === undefined) continue;
      const obsText = observations
        .all(id)
        .map((o) => keywordObservation(o.content, o.kind))
        .join(OBS_SEPARATOR);
      insert.run(id, row.name, row.entity_type, obsText);
      docs.set(id, { terms: new Map(), length: 0 });
    }
    for (const [term, doc] of this.conn
      .stmt<[], [string, number]>('SELECT term, doc FROM temp.topk_docs_instance')
      .raw()
      .iterate() as Iterable<[string, number]>) {
      const d = docs.get(doc);
      if (d === undefined) continue;
      d.terms.set(term, (d.terms.get(term) ?? 0) + 1);
      d.length++;
    }
    this.conn.db.exec('DELETE FROM temp.topk_docs');
    return docs;
  }

  /** FTS5's row count and token total, from its averages record (varints: rows, then each column's tokens). */
  private corpus(): CorpusStats {
    const block = this.conn.stmt<[number], { block: Buffer }>('SELECT block FROM entity_fts_data WHERE id = ?').get(AVERAGES_ROWID)?.block;
    if (block === undefined || block.length === 0) return { rows: 0, tokens: 0 };
    let at = 0;
    const next = (): number => {
      // SQLite's varint: big-endian 7-bit groups, high bit set means more; the 9th byte has 8 bits.
      let value = 0;
      for (let i = 0; i < 9; i++) {
        const byte = block[at++] ?? 0;
        if (i === 8) return value * 256 + byte;
        value = value * 128 + (byte & 0x7f);
        if ((byte & 0x80) === 0) return value;
      }
      return value;
    };
    const rows = next();
    let tokens = 0;
    while (at < block.length) tokens += next();
    return { rows, tokens };
  }

  private ensureTemp(): void {
    if (this.tempReady) return;
    this.conn.db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.topk_main_instance USING fts5vocab(main, entity_fts, 'instance');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.topk_docs USING fts5(name, entity_type, obs_text, tokenize = ${TOKENIZE});
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.topk_docs_instance USING fts5vocab(temp, topk_docs, 'instance');`);
    this.tempReady = true;
  }
}
