/**
 * PostgreSQL with pgvector: the same memory as the SQLite file, shared by many Limbic processes on
 * many machines. Selected by a postgres:// URL (`--db` or LIMBIC_DB). Every capability is present:
 * the graph (pg-graph.ts, pg-graph-reads.ts), usage signals (pg-usage.ts), keywords with BM25 over
 * tsvector (pg-keywords.ts), vectors with HNSW (pg-vectors.ts), the tuner's log (pg-tuning.ts),
 * maintenance (pg-maintenance.ts) and whole-memory transfer (pg-transfer.ts), over one pool (pg-connection.ts)
 * migrated on first use (migrations.ts).
 */
import type { Store, StoreStats } from '../store.js';
import { PgConnection, type PgConnectionOptions } from './pg-connection.js';

export { redactPassword } from './pg-connection.js';
import { PgCapture } from './pg-capture.js';
import { PgGraph } from './pg-graph.js';
import { PgKeywordIndex } from './pg-keywords.js';
import { PgMaintenance } from './pg-maintenance.js';
import { PgTransfer } from './pg-transfer.js';
import { PgTuning } from './pg-tuning.js';
import { PgUsage } from './pg-usage.js';
import { DEFAULT_EF_SEARCH, PgVectorIndex, type PgVectorOptions } from './pg-vectors.js';

export interface PgStoreOptions extends PgConnectionOptions, PgVectorOptions {}

/** True for the URLs this backend opens: postgres:// and postgresql://. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//i.test(location);

/** Opens lazily: the first call connects and migrates; call open() to fail early on a bad URL. */
export function openPgStore(options: PgStoreOptions): PgStore {
  return new PgStore(options);
}

export class PgStore implements Store {
  readonly graph: PgGraph;
  readonly usage: PgUsage;
  readonly keywords: PgKeywordIndex;
  readonly vectors: PgVectorIndex;
  readonly transfer: PgTransfer;
  readonly tuning: PgTuning;
  readonly maintenance: PgMaintenance;
  readonly capture: PgCapture;
  private readonly conn: PgConnection;

  constructor(options: PgStoreOptions) {
    this.conn = new PgConnection({
      ...options,
      sessionSettings: { 'hnsw.ef_search': String(options.efSearch ?? DEFAULT_EF_SEARCH), ...options.sessionSettings },
    });
    this.graph = new PgGraph(this.conn);
    this.usage = new PgUsage(this.conn);
    this.keywords = new PgKeywordIndex(this.conn);
    this.vectors = new PgVectorIndex(this.conn, options);
    this.transfer = new PgTransfer(this.conn);
    this.tuning = new PgTuning(this.conn);
    this.maintenance = new PgMaintenance(this.conn);
    this.capture = new PgCapture(this.conn);
  }

  /** Connects and migrates now (every other call does it on first use). */
  async open(): Promise<void> {
    await this.conn.open();
  }

  /** The same as vectors: PostgreSQL refuses to open without pgvector (migrations.ts). */
  requireVectors(): PgVectorIndex {
    return this.vectors;
  }

  /**
   * The memory's size is its own tables' (with their indexes and TOAST), in its own schema: a
   * namespace is one schema of a shared database, whose whole size would be every namespace's.
   */
  async stats(): Promise<StoreStats> {
    const [row] = await this.conn.query<{ entities: number; observations: number; relations: number; bytes: number }>(
      `SELECT (SELECT count(*) FROM entities) AS entities, (SELECT count(*) FROM observations) AS observations,
              (SELECT count(*) FROM relations) AS relations,
              (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'm')) AS bytes`,
    );
    return {
      entities: row?.entities ?? 0,
      observations: row?.observations ?? 0,
      relations: row?.relations ?? 0,
      databaseBytes: row?.bytes,
      location: this.conn.location,
    };
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}
