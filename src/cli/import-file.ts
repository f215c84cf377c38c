/**
 * `limbic import FILE`: streams a memory.jsonl into the store in batched transactions. A malformed
 * line is skipped and reported with its number, never fatal; running it twice adds nothing.
 *
 * A line with Limbic's fields (a `limbic export`, docs/export.md) is restored whole through the
 * transfer capability, as `limbic migrate` writes: kinds and times of observations, superseded
 * history, status, project, times, relation context and end, use counts; the ranking parameters and
 * co-occurrence lines too. A line without them is imported as the official server would read it.
 *
 * Every line that is not stored as written is told (issue 35 item 13), with its number, its name
 * and what happened: merged into an earlier line of the same name (NFC twins included), its type
 * not kept, a repeated observation dropped, a missing type, text stored in NFC, a Limbic field not
 * understood, a type the memory already holds otherwise. An observation the memory held before the
 * import is no repeat: running an import twice adds nothing and tells the same lines.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { ERROR_CODES, isMemoryError } from '../core/errors.js';
import { parseMemoryLine, type LimbicEntityFields, type LimbicRelationFields, type RankingLine } from '../core/jsonl.js';
import { DEFAULT_OBSERVATION_KIND, STORED_STATUS, type NewEntity, type Relation } from '../core/types.js';
import type { MemoryService } from '../service/memory-service.js';
import { TextBatch } from '../service/redaction-batch.js';
import { RedactionTally, type RedactionCount } from '../core/text/redaction.js';
import type { CoOccurrenceRecord, EntityRecord, RelationRecord } from '../store/store.js';
import { progressBar, type Progress } from './progress.js';

/** One line not stored as written: its number, the name it gave (a relation's "from -[type]-> to"), and what happened. */
export interface ImportNote {
  readonly line: number;
  readonly name: string;
  readonly notes: readonly string[];
}

export interface ImportReport {
  readonly lines: number;
  readonly entitiesRead: number;
  readonly relationsRead: number;
  readonly entitiesAdded: number;
  readonly observationsAdded: number;
  readonly relationsAdded: number;
  readonly skipped: readonly { readonly line: number; readonly reason: string }[];
  readonly ignored: number;
  /** Relations whose endpoints are not entities after the import (kept, as the official server does). */
  readonly danglingRelations: number;
  /** False when another process kept the keyword indexes from being compacted (the data is saved). */
  readonly compacted: boolean;
  /** What was redacted before storing, by type (docs/redaction.md); empty when nothing was. */
  readonly redactions: readonly RedactionCount[];
  /** How many lines were not stored as written (each one told to `onNote`). */
  readonly notKeptAsWritten: number;
  /** Superseded observations restored (lines of a Limbic export). */
  readonly supersededAdded: number;
  /** The file's ranking parameters: restored, kept (the memory's are as new or newer), or none in the file. */
  readonly ranking: 'restored' | 'kept' | 'none';
  /** Co-occurrence counts restored or raised. */
  readonly coOccurrences: number;
}

export interface ImportOptions {
  /** Told each line not stored as written, in line order. */
  readonly onNote?: (note: ImportNote) => void;
}

const BATCH_LINES = 2_000;

/** A 53-bit hash of a text (cyrb53): repeated observations are found without keeping every text. */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const quote = (text: string, max = 60): string => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);

/** The first line of each entity name in the file: where a later line of the same name is merged. */
interface FirstLine {
  readonly line: number;
  readonly type: string;
  /** What a later line's own status, project and creation time are compared with (a Limbic line's). */
  readonly status: string | undefined;
  readonly project: string | undefined;
  readonly createdAt: number | undefined;
}

export async function importFile(service: MemoryService, path: string, options: ImportOptions = {}): Promise<ImportReport> {
  const size = statSync(path).size;
  const bar = progressBar('import', size, 'bytes');
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  const { store } = service;
  const transfer = store.transfer;
  let lineNo = 0;
  let bytes = 0;
  let entities: NewEntity[] = [];
  let relations: Relation[] = [];
  /** Lines of a Limbic export, by name (lines of one name in a batch are merged into one record). */
  let records = new Map<string, EntityRecord>();
  let relationRecords: RelationRecord[] = [];
  let pairs: CoOccurrenceRecord[] = [];
  /** This batch's lines not kept as written, and the names first seen in it (checked against the memory). */
  let batchNotes = new Map<number, { name: string; notes: string[] }>();
  let firstInBatch = new Map<string, { line: number; type: string }>();
  let plainNames = new Set<string>();
  let ranking: RankingLine | undefined;
  const totals = {
    entitiesRead: 0,
    relationsRead: 0,
    entitiesAdded: 0,
    observationsAdded: 0,
    relationsAdded: 0,
    supersededAdded: 0,
    coOccurrences: 0,
    ignored: 0,
    notKeptAsWritten: 0,
  };
  const skipped: { line: number; reason: string }[] = [];
  const endpoints = new Set<string>();
  const relationEnds: [string, string][] = [];
  const tally = new RedactionTally();
  const firstLines = new Map<string, FirstLine>();
  const observationLines = new Map<string, Map<number, number>>();
  const relationLines = new Map<string, number>();
  const now = Date.now();

  const note = (line: number, name: string, what: readonly string[]): void => {
    if (what.length === 0) return;
    const held = batchNotes.get(line);
    if (held === undefined) batchNotes.set(line, { name, notes: [...what] });
    else held.notes.push(...what);
  };

  const flush = async (): Promise<void> => {
    // A name first seen in this batch that the memory holds with another type keeps the memory's.
    if (firstInBatch.size > 0) {
      const held = await store.graph.entitiesById(await store.graph.idsByName([...firstInBatch.keys()]));
      for (const e of held.values()) {
        const first = firstInBatch.get(e.name);
        if (first !== undefined && first.type !== e.entityType)
          note(first.line, e.name, [
            `type ${quote(first.type, Infinity)} not kept: the memory already holds this entity as ${quote(e.entityType, Infinity)}`,
          ]);
      }
    }
    if (records.size > 0 && transfer !== undefined) {
      const written = await transfer.writeEntities(await redactRecords(service, [...records.values()], tally), false);
      totals.entitiesAdded += written.entities;
      totals.observationsAdded += written.observations;
      totals.supersededAdded += written.superseded;
    }
    if (entities.length > 0 || relations.length > 0) {
      const counts = await service.importBatch({ entities, relations }, tally);
      totals.entitiesAdded += counts.entitiesAdded;
      totals.observationsAdded += counts.observationsAdded;
      totals.relationsAdded += counts.relationsAdded;
    }
    if (relationRecords.length > 0 && transfer !== undefined)
      totals.relationsAdded += await transfer.writeRelations(await redactRelationRecords(service, relationRecords, tally));
    if (pairs.length > 0 && transfer !== undefined) totals.coOccurrences += await transfer.writeCoOccurrences(pairs);
    // Notes quote names, types and relation ends from the file: redacted as what is stored is, so
    // no secret reaches stderr or the --report file (docs/redaction.md).
    const told = [...batchNotes].sort(([a], [b]) => a - b);
    const texts = told.flatMap(([, { name, notes }]) => [name, ...notes]);
    const shown = service.redactor.enabled && texts.length > 0 ? (await service.redactor.redactAll(texts)).texts : texts;
    let at = 0;
    for (const [line, { notes }] of told) {
      const name = shown[at++] ?? '';
      totals.notKeptAsWritten++;
      options.onNote?.({ line, name, notes: notes.map(() => shown[at++] ?? '') });
    }
    entities = [];
    relations = [];
    records = new Map();
    relationRecords = [];
    pairs = [];
    batchNotes = new Map();
    firstInBatch = new Map();
    plainNames = new Set();
    bar.update(Math.min(bytes, size));
  };

  for await (const line of lines) {
    lineNo++;
    bytes += Buffer.byteLength(line) + 1;
    const parsed = parseMemoryLine(line);
    switch (parsed.kind) {
      case 'entity': {
        const { entity } = parsed;
        const limbic = transfer === undefined ? undefined : parsed.limbic;
        totals.entitiesRead++;
        const notes = [...(parsed.notes ?? [])];
        if (parsed.limbic !== undefined && transfer === undefined)
          notes.push("Limbic's fields not stored: this backend cannot restore them (it has no transfer capability)");
        const first = firstLines.get(entity.name);
        if (first === undefined) {
          firstLines.set(entity.name, {
            line: lineNo,
            type: entity.entityType,
            status: limbic?.status,
            project: limbic?.project,
            createdAt: limbic?.createdAt,
          });
          firstInBatch.set(entity.name, { line: lineNo, type: entity.entityType });
        } else {
          notes.push(`merged into line ${first.line}, which has the same name`);
          if (first.type !== entity.entityType)
            notes.push(`type ${quote(entity.entityType, Infinity)} not kept: ${quote(first.type, Infinity)} kept from line ${first.line}`);
          const differs =
            limbic !== undefined &&
            (limbic.status !== first.status || limbic.project !== first.project || limbic.createdAt !== first.createdAt);
          if (differs) notes.push(`its status, project and creation time not kept: those of line ${first.line} kept`);
        }
        let seen = observationLines.get(entity.name);
        if (seen === undefined) observationLines.set(entity.name, (seen = new Map()));
        for (const [i, o] of entity.observations.entries()) {
          const h = hash53(o);
          const at = seen.get(h);
          if (at === undefined) seen.set(h, lineNo);
          else {
            // Redacted whole before it is cut to an excerpt: a secret cut in half is no longer found.
            const shown = service.redactor.enabled ? (await service.redact(o)).text : o;
            notes.push(
              `observation ${i + 1} ${quote(shown)} dropped: ${at === lineNo ? 'repeated on this line' : `the same as on line ${at}`}`,
            );
          }
        }
        note(lineNo, entity.name, notes);
        if (limbic === undefined) {
          entities.push(entity);
          plainNames.add(entity.name);
        } else {
          // Records are written before plain lines: a plain line of this name in the batch goes first.
          if (plainNames.has(entity.name)) await flush();
          const record = toRecord(entity, limbic, now);
          const held = records.get(entity.name);
          records.set(entity.name, held === undefined ? record : mergeRecords(held, record));
        }
        break;
      }
      case 'relation': {
        const { relation } = parsed;
        const limbic = transfer === undefined ? undefined : parsed.limbic;
        totals.relationsRead++;
        const notes = [...(parsed.notes ?? [])];
        const label = `${relation.from} -[${relation.relationType}]-> ${relation.to}`;
        const key = JSON.stringify([relation.from, relation.to, relation.relationType]);
        const first = relationLines.get(key);
        if (first === undefined) relationLines.set(key, lineNo);
        else notes.push(`the same relation as line ${first}: not stored again (line ${first}'s context and end kept)`);
        note(lineNo, label, notes);
        if (limbic === undefined) relations.push(relation);
        else relationRecords.push(toRelationRecord(relation, limbic, now));
        endpoints.add(relation.from).add(relation.to);
        relationEnds.push([relation.from, relation.to]);
        break;
      }
      case 'ranking':
        if (ranking !== undefined) note(lineNo, 'ranking parameters', ['a second ranking line: the newest of them is kept']);
        if (ranking === undefined || (parsed.ranking.tunedAt ?? 0) > (ranking.tunedAt ?? 0)) ranking = parsed.ranking;
        break;
      case 'co-occurrence':
        pairs.push({ a: parsed.pair.a, b: parsed.pair.b, count: parsed.pair.count, lastCo: parsed.pair.lastCo });
        break;
      case 'error':
        skipped.push({ line: lineNo, reason: parsed.reason });
        break;
      case 'ignored':
        totals.ignored++;
        break;
      case 'blank':
        break;
      default: {
        const _exhaustive: never = parsed;
        return _exhaustive;
      }
    }
    if (entities.length + relations.length + records.size + relationRecords.length + pairs.length >= BATCH_LINES) await flush();
  }
  await flush();
  bar.stop();
  const rankingOutcome = await restoreRanking(service, ranking);
  const compacted = await compactIndexes(service);
  const known = await service.existingNames([...endpoints]);
  const danglingRelations = relationEnds.filter(([from, to]) => !known.has(from) || !known.has(to)).length;
  const { ignored, notKeptAsWritten, supersededAdded, coOccurrences, ...counts } = totals;
  return {
    lines: lineNo,
    ...counts,
    skipped,
    ignored,
    danglingRelations,
    compacted,
    redactions: tally.counts(),
    notKeptAsWritten,
    supersededAdded,
    ranking: rankingOutcome,
    coOccurrences,
  };
}

/** A Limbic line as the transfer capability writes it; what the line leaves out takes the import's time and the defaults. */
function toRecord(entity: NewEntity, limbic: LimbicEntityFields, now: number): EntityRecord {
  const seen = new Set<string>();
  const observations = entity.observations.flatMap((content, i) => {
    if (seen.has(content)) return [];
    seen.add(content);
    return [{ content, kind: limbic.observationKinds?.[i] ?? DEFAULT_OBSERVATION_KIND, createdAt: limbic.observationTimes?.[i] ?? now }];
  });
  const createdAt = limbic.createdAt ?? now;
  return {
    name: entity.name,
    entityType: entity.entityType,
    // As the transfer capability reads and writes it: the stored word (types.ts STORED_STATUS).
    status: STORED_STATUS[limbic.status ?? 'active'],
    createdAt,
    updatedAt: limbic.updatedAt ?? Math.max(createdAt, now),
    project: limbic.project,
    observations,
    superseded: limbic.superseded ?? [],
    access: limbic.access,
    vector: undefined,
  };
}

/** Two lines of one name in a batch: the first's type, status, times and project; the observations and history of both. */
function mergeRecords(first: EntityRecord, later: EntityRecord): EntityRecord {
  const held = new Set(first.observations.map((o) => o.content));
  return {
    ...first,
    observations: [...first.observations, ...later.observations.filter((o) => !held.has(o.content))],
    superseded: [...first.superseded, ...later.superseded],
    access: first.access ?? later.access,
  };
}

function toRelationRecord(relation: Relation, limbic: LimbicRelationFields, now: number): RelationRecord {
  return {
    from: relation.from,
    to: relation.to,
    relationType: relation.relationType,
    context: limbic.context,
    createdAt: limbic.createdAt ?? now,
    endedAt: relation.ended_at === undefined ? undefined : Date.parse(relation.ended_at),
  };
}

/** Records with every text through the redactor, as importBatch sends plain lines (docs/redaction.md). */
async function redactRecords(service: MemoryService, records: readonly EntityRecord[], tally: RedactionTally): Promise<EntityRecord[]> {
  if (!service.redactor.enabled) return [...records];
  const batch = new TextBatch();
  const read = records.map((r) => ({
    r,
    name: batch.add(r.name),
    type: batch.add(r.entityType),
    observations: r.observations.map((o) => batch.add(o.content)),
    superseded: r.superseded.map((s) => [batch.add(s.content), batch.add(s.supersededBy)] as const),
  }));
  await batch.run(service.redactor, tally);
  return read.map(({ r, name, type, observations, superseded }) => ({
    ...r,
    name: name(),
    entityType: type(),
    observations: r.observations.map((o, i) => ({ ...o, content: observations[i]?.() ?? o.content })),
    superseded: r.superseded.map((s, i) => ({
      ...s,
      content: superseded[i]?.[0]() ?? s.content,
      supersededBy: superseded[i]?.[1]() ?? s.supersededBy,
    })),
  }));
}

async function redactRelationRecords(
  service: MemoryService,
  records: readonly RelationRecord[],
  tally: RedactionTally,
): Promise<RelationRecord[]> {
  if (!service.redactor.enabled) return [...records];
  const batch = new TextBatch();
  const read = records.map((r) => ({
    r,
    from: batch.add(r.from),
    to: batch.add(r.to),
    type: batch.add(r.relationType),
    context: batch.addOptional(r.context),
  }));
  await batch.run(service.redactor, tally);
  return read.map(({ r, from, to, type, context }) => ({ ...r, from: from(), to: to(), relationType: type(), context: context() }));
}

/** The file's ranking parameters, unless the memory's were applied as recently or later (as limbic migrate decides). */
async function restoreRanking(service: MemoryService, ranking: RankingLine | undefined): Promise<ImportReport['ranking']> {
  const { tuning } = service.store;
  if (ranking === undefined || tuning === undefined) return 'none';
  const current = await tuning.parameters();
  if (current !== undefined && current.source === 'tuned' && (current.tunedAt ?? 0) >= (ranking.tunedAt ?? 0)) return 'kept';
  await tuning.setParameters({ gamma: ranking.gamma, betaSal: ranking.betaSal, rrfK: ranking.rrfK }, ranking.tunedAt ?? Date.now());
  return 'restored';
}

/**
 * Compacts the keyword indexes, with a progress bar. Run even when nothing was added: it costs
 * nothing on compact indexes and finishes a compaction that a killed import left half done.
 * Another process holding the lock past the wait limit only leaves them uncompacted.
 */
export async function compactIndexes(service: MemoryService): Promise<boolean> {
  let bar: Progress | undefined;
  try {
    await service.optimizeIndexes(({ done, total }) => {
      bar ??= progressBar('compact', total, 'pages');
      bar.update(done, total);
    });
    return true;
  } catch (error) {
    if (!isMemoryError(error) || error.code !== ERROR_CODES.STORE_BUSY) throw error;
    process.stderr.write(
      'limbic: the imported data is saved, but another Limbic process held the database past the wait limit, so the keyword indexes were not compacted. Searches work as they are; run the import again later to compact them.\n',
    );
    return false;
  } finally {
    bar?.stop();
  }
}
