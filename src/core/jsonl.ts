/**
 * The official `memory.jsonl` format (docs/migrating.md): parsing one line with
 * the field variants seen in the wild, and writing lines exactly as the official server does.
 *
 * Limbic's own export (docs/export.md) writes the same two line types with Limbic's fields as extra
 * keys, which the official loader drops (it copies only the keys it knows), and two line types of
 * its own (`limbic_ranking`, `limbic_co_occurrence`), which the official loader ignores (it keeps
 * only `entity` and `relation` lines). Parsing reads them back; a Limbic field that is not what
 * Limbic writes is left out with a note, never failing the line the official reader would take.
 */
import { toNfc } from './text/fold.js';
import { ENTITY_STATUSES, parseStatus, type EntityStatus, type KnowledgeGraph, type NewEntity, type Relation } from './types.js';

/** What a Limbic export adds to an entity line (each piece absent when the line does not carry it). */
export interface LimbicEntityFields {
  readonly status?: EntityStatus | undefined;
  readonly createdAt?: number | undefined;
  readonly updatedAt?: number | undefined;
  readonly project?: string | undefined;
  /** Parallel to the line's observations. */
  readonly observationKinds?: readonly string[] | undefined;
  /** Parallel to the line's observations, epoch ms. */
  readonly observationTimes?: readonly number[] | undefined;
  readonly superseded?: readonly SupersededLine[] | undefined;
  readonly access?: { readonly count: number; readonly lastAccess: number; readonly days: readonly string[] } | undefined;
}

export interface SupersededLine {
  readonly content: string;
  readonly kind: string;
  readonly createdAt: number;
  readonly supersededAt: number;
  readonly supersededBy: string;
}

/** What a Limbic export adds to a relation line besides `ended_at` (which the plain relation carries). */
export interface LimbicRelationFields {
  readonly context?: string | undefined;
  readonly createdAt?: number | undefined;
}

/** The applied ranking parameters (`limbic tune --apply`), as a `limbic_ranking` line carries them. */
export interface RankingLine {
  readonly gamma: number;
  readonly betaSal: number;
  readonly rrfK: number;
  readonly tunedAt: number | undefined;
}

export interface CoOccurrenceLine {
  readonly a: string;
  readonly b: string;
  readonly count: number;
  readonly lastCo: number;
}

export type ParsedLine =
  | {
      readonly kind: 'entity';
      readonly entity: NewEntity;
      /** Present when the line carries Limbic's fields (a Limbic export). */
      readonly limbic?: LimbicEntityFields;
      /** What the line said that is not stored as written, and why; absent when all is. */
      readonly notes?: readonly string[];
    }
  | {
      readonly kind: 'relation';
      readonly relation: Relation;
      readonly limbic?: LimbicRelationFields;
      readonly notes?: readonly string[];
    }
  | { readonly kind: 'ranking'; readonly ranking: RankingLine }
  | { readonly kind: 'co-occurrence'; readonly pair: CoOccurrenceLine }
  | { readonly kind: 'blank' }
  | { readonly kind: 'ignored'; readonly reason: string }
  | { readonly kind: 'error'; readonly reason: string };

/** The line types Limbic's export adds (the official loader ignores any type but entity and relation). */
export const RANKING_LINE_TYPE = 'limbic_ranking';
export const CO_OCCURRENCE_LINE_TYPE = 'limbic_co_occurrence';

/** Keys of an entity line that only a Limbic export writes. */
const ENTITY_KEYS = [
  'status',
  'created_at',
  'updated_at',
  'project',
  'observation_kinds',
  'observation_times',
  'superseded_observations',
  'access',
] as const;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The first of `keys` holding a string, with the key it was read from (to name it in an error). */
function firstField(record: Record<string, unknown>, keys: readonly string[]): { key: string; value: string } | undefined {
  for (const key of keys) {
    const value = str(record[key]);
    if (value !== undefined) return { key, value };
  }
  return undefined;
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * JSON's \u escapes can spell a lone UTF-16 surrogate, which SQLite stores as bytes that are not
 * UTF-8 and export writes back as three U+FFFD; the MCP tools refuse such text (src/mcp/schemas.ts),
 * and so does the import. Returns the reason for the first ill-formed field, if any.
 */
function illFormedField(fields: readonly (readonly [string, string])[]): string | undefined {
  for (const [field, value] of fields) {
    const at = LONE_SURROGATE.exec(value)?.index;
    if (at === undefined) continue;
    const unit = value.charCodeAt(at).toString(16).toUpperCase();
    return `${field} is not well-formed Unicode: a lone UTF-16 surrogate (\\u${unit}) at index ${at}; fix the file's \\u escapes (surrogates only in pairs) and import it again`;
  }
  return undefined;
}

/**
 * Parses one line. Accepts `name | entityName | id`, `from | from_id`, `to | to_id`,
 * `relationType | relation_type`, and falls back from `entityType` to `type` or `"entity"`
 * (basic-memory's importer). Lines of other types (such as `_aim` markers) are ignored.
 * @example parseMemoryLine('{"type":"relation","from_id":"a","to_id":"b","relation_type":"knows"}')
 */
export function parseMemoryLine(line: string): ParsedLine {
  if (line.trim() === '') return { kind: 'blank' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    // V8 quotes a snippet of the line in its message ('Unexpected token 'g', "{"a": ghp_…" is not
    // valid JSON'): the reason reaches stderr, so it keeps the error and drops the line's text.
    const raw = (error as Error).message;
    const quoted = raw.search(/, (?:\.\.\.)?"/);
    const message = quoted === -1 ? raw : raw.slice(0, quoted);
    return { kind: 'error', reason: `not valid JSON (${message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'error', reason: 'not a JSON object' };
  }
  const record = value as Record<string, unknown>;
  const type = str(record.type);
  if (type === 'relation') {
    const from = firstField(record, ['from', 'from_id']);
    const to = firstField(record, ['to', 'to_id']);
    const relationType = firstField(record, ['relationType', 'relation_type']);
    if (from === undefined || to === undefined || relationType === undefined) {
      return { kind: 'error', reason: 'a relation needs string "from", "to" and "relationType"' };
    }
    const illFormed = illFormedField([from, to, relationType].map((f) => [JSON.stringify(f.key), f.value] as const));
    if (illFormed !== undefined) return { kind: 'error', reason: illFormed };
    // Stored and compared in NFC, as every tool's text is (fold.ts).
    const relation = { from: toNfc(from.value), to: toNfc(to.value), relationType: toNfc(relationType.value) };
    const notes: string[] = [];
    const renamed = [from, to, relationType].filter((f, i) => f.value !== [relation.from, relation.to, relation.relationType][i]);
    if (renamed.length > 0)
      notes.push(`${renamed.map((f) => JSON.stringify(f.key)).join(', ')} stored in Unicode NFC (written in another form)`);
    const limbic = relationFields(record, notes);
    const read = { ...(limbic === undefined ? {} : { limbic }), ...(notes.length === 0 ? {} : { notes }) };
    // Limbic's export marks a relation end_relation ended; it is imported ended (a bad date is refused, not read as current).
    if (record.ended_at === undefined) return { kind: 'relation', relation, ...read };
    const ended = typeof record.ended_at === 'string' ? Date.parse(record.ended_at) : Number.NaN;
    if (Number.isNaN(ended)) return { kind: 'error', reason: '"ended_at" must be an ISO 8601 date, as limbic export writes it' };
    return { kind: 'relation', relation: { ...relation, ended_at: new Date(ended).toISOString() }, ...read };
  }
  if (type === 'entity' || Array.isArray(record.observations)) {
    const name = firstField(record, ['name', 'entityName', 'id']);
    if (name === undefined) return { kind: 'error', reason: 'an entity needs a string "name"' };
    const entityType =
      firstField(record, ['entityType', 'entity_type']) ??
      (type !== undefined && type !== 'entity' ? { key: 'type', value: type } : undefined);
    const raw = record.observations ?? [];
    if (!Array.isArray(raw)) return { kind: 'error', reason: '"observations" must be an array of strings' };
    const observations = raw.filter((o): o is string => typeof o === 'string');
    if (observations.length !== raw.length) return { kind: 'error', reason: '"observations" must hold only strings' };
    const illFormed = illFormedField([
      [JSON.stringify(name.key), name.value],
      ...(entityType === undefined ? [] : [[JSON.stringify(entityType.key), entityType.value] as const]),
      ...observations.map((o, i) => [`"observations"[${i}]`, o] as const),
    ]);
    if (illFormed !== undefined) return { kind: 'error', reason: illFormed };
    const entity = { name: toNfc(name.value), entityType: toNfc(entityType?.value ?? 'entity'), observations: observations.map(toNfc) };
    const notes: string[] = [];
    if (entityType === undefined) notes.push('type missing: stored as "entity"');
    const renamed = [
      ...(entity.name === name.value ? [] : [JSON.stringify(name.key)]),
      ...(entityType === undefined || entity.entityType === entityType.value ? [] : [JSON.stringify(entityType.key)]),
      ...observations.flatMap((o, i) => (entity.observations[i] === o ? [] : [`observation ${i + 1}`])),
    ];
    if (renamed.length > 0) notes.push(`${renamed.join(', ')} stored in Unicode NFC (written in another form)`);
    const limbic = entityFields(record, observations.length, notes);
    return {
      kind: 'entity',
      entity,
      ...(limbic === undefined ? {} : { limbic }),
      ...(notes.length === 0 ? {} : { notes }),
    };
  }
  if (type === RANKING_LINE_TYPE) {
    const [gamma, betaSal, rrfK] = [record.gamma, record.beta_sal, record.rrf_k];
    if (!isFiniteNumber(gamma) || !isFiniteNumber(betaSal) || !isFiniteNumber(rrfK) || rrfK <= 0)
      return {
        kind: 'error',
        reason: `a ${RANKING_LINE_TYPE} line needs numbers "gamma", "beta_sal" and "rrf_k" (above 0), as limbic export writes them`,
      };
    const tunedAt = record.tuned_at === undefined ? undefined : isoTime(record.tuned_at);
    if (tunedAt === null) return { kind: 'error', reason: '"tuned_at" must be an ISO 8601 date, as limbic export writes it' };
    return { kind: 'ranking', ranking: { gamma, betaSal, rrfK, tunedAt } };
  }
  if (type === CO_OCCURRENCE_LINE_TYPE) {
    const [a, b, count] = [str(record.a), str(record.b), record.count];
    const lastCo = isoTime(record.last_co);
    if (a === undefined || b === undefined || !isFiniteNumber(count) || count < 0 || lastCo === null || lastCo === undefined)
      return {
        kind: 'error',
        reason: `a ${CO_OCCURRENCE_LINE_TYPE} line needs strings "a" and "b", a "count" of 0 or more and an ISO 8601 "last_co", as limbic export writes them`,
      };
    return { kind: 'co-occurrence', pair: { a: toNfc(a), b: toNfc(b), count, lastCo } };
  }
  return { kind: 'ignored', reason: `line of type ${JSON.stringify(record.type ?? null)}` };
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Epoch ms of an ISO 8601 string; undefined when absent, null when it is no date. */
function isoTime(v: unknown): number | undefined | null {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
}

/** A string array of `length` (or any length when undefined), or undefined. */
function stringArray(v: unknown, length?: number): string[] | undefined {
  if (!Array.isArray(v) || (length !== undefined && v.length !== length) || !v.every((x) => typeof x === 'string')) return undefined;
  return v as string[];
}

/**
 * Limbic's fields of an entity line, or undefined when it has none. A field that is not as Limbic
 * writes it is left out and said in `notes` (the line itself is kept: the official reader takes it).
 */
function entityFields(record: Record<string, unknown>, observations: number, notes: string[]): LimbicEntityFields | undefined {
  if (!ENTITY_KEYS.some((k) => record[k] !== undefined)) return undefined;
  const bad = (key: string, what: string, instead: string): void => {
    notes.push(`"${key}" ${what}: ${instead}`);
  };
  const time = (key: string): number | undefined => {
    const t = isoTime(record[key]);
    if (t === null) bad(key, 'is not an ISO 8601 date', 'the import time is stored instead');
    return t ?? undefined;
  };
  let status: EntityStatus | undefined;
  if (record.status !== undefined) {
    status = typeof record.status === 'string' ? parseStatus(record.status) : undefined;
    if (status === undefined) bad('status', `is not one of ${ENTITY_STATUSES.join(', ')}`, 'stored as active');
  }
  let project: string | undefined;
  if (record.project !== undefined) {
    project = str(record.project);
    if (project === undefined) bad('project', 'is not a string', 'stored without a project');
  }
  let observationKinds: string[] | undefined;
  if (record.observation_kinds !== undefined) {
    observationKinds = stringArray(record.observation_kinds, observations)?.map(toNfc);
    if (observationKinds === undefined || observationKinds.some((k) => k.trim() === '')) {
      observationKinds = undefined;
      bad('observation_kinds', `is not ${observations} kinds, one per observation`, 'every observation stored as generic');
    }
  }
  let observationTimes: number[] | undefined;
  if (record.observation_times !== undefined) {
    const times = stringArray(record.observation_times, observations)?.map((t) => isoTime(t));
    observationTimes = times?.every((t): t is number => typeof t === 'number') === true ? times : undefined;
    if (observationTimes === undefined)
      bad('observation_times', `is not ${observations} ISO 8601 dates, one per observation`, 'the import time is stored instead');
  }
  let superseded: SupersededLine[] | undefined;
  if (record.superseded_observations !== undefined) {
    superseded = supersededLines(record.superseded_observations);
    if (superseded === undefined)
      bad(
        'superseded_observations',
        'is not a list of {content, kind, created_at, superseded_at, superseded_by}',
        'the history is not stored',
      );
  }
  let access: LimbicEntityFields['access'];
  if (record.access !== undefined) {
    const a = record.access as Record<string, unknown> | null;
    const lastAccess = typeof a === 'object' && a !== null ? isoTime(a.last_access) : null;
    const days = typeof a === 'object' && a !== null ? stringArray(a.days) : undefined;
    if (
      a !== null &&
      typeof a === 'object' &&
      isFiniteNumber(a.count) &&
      a.count >= 0 &&
      typeof lastAccess === 'number' &&
      days !== undefined
    )
      access = { count: a.count, lastAccess, days };
    else bad('access', 'is not {count, last_access, days}', 'no use is stored');
  }
  return {
    status,
    createdAt: time('created_at'),
    updatedAt: time('updated_at'),
    project,
    observationKinds,
    observationTimes,
    superseded,
    access,
  };
}

function supersededLines(v: unknown): SupersededLine[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: SupersededLine[] = [];
  for (const item of v) {
    if (typeof item !== 'object' || item === null) return undefined;
    const r = item as Record<string, unknown>;
    const [content, kind, by] = [str(r.content), str(r.kind), str(r.superseded_by)];
    const [createdAt, supersededAt] = [isoTime(r.created_at), isoTime(r.superseded_at)];
    if (
      content === undefined ||
      kind === undefined ||
      by === undefined ||
      typeof createdAt !== 'number' ||
      typeof supersededAt !== 'number'
    )
      return undefined;
    if (
      illFormedField([
        ['content', content],
        ['kind', kind],
        ['superseded_by', by],
      ]) !== undefined
    )
      return undefined;
    out.push({ content: toNfc(content), kind: toNfc(kind), createdAt, supersededAt, supersededBy: toNfc(by) });
  }
  return out;
}

/** Limbic's fields of a relation line (besides `ended_at`), or undefined when it has none. */
function relationFields(record: Record<string, unknown>, notes: string[]): LimbicRelationFields | undefined {
  if (record.context === undefined && record.created_at === undefined) return undefined;
  let context: string | undefined;
  if (record.context !== undefined) {
    context = str(record.context);
    if (context === undefined || illFormedField([['"context"', context]]) !== undefined) {
      context = undefined;
      notes.push('"context" is not well-formed text: stored without a context');
    } else context = toNfc(context);
  }
  const createdAt = isoTime(record.created_at);
  if (createdAt === null) notes.push('"created_at" is not an ISO 8601 date: the import time is stored instead');
  return { context, createdAt: createdAt ?? undefined };
}

/** One entity line, keys in the official writer's order. */
export function entityLine(e: { name: string; entityType: string; observations: readonly string[] }): string {
  return JSON.stringify({ type: 'entity', name: e.name, entityType: e.entityType, observations: e.observations });
}

/**
 * One relation line, keys in the official writer's order; a relation end_relation ended carries
 * `ended_at` after them (the official reader drops keys it does not know; written plain, the line
 * would say the relation still holds).
 */
export function relationLine(r: Relation): string {
  return JSON.stringify({
    type: 'relation',
    from: r.from,
    to: r.to,
    relationType: r.relationType,
    ...(r.ended_at === undefined ? {} : { ended_at: r.ended_at }),
  });
}

/** The whole file as the official server writes it: entities, then relations, "\n"-joined, no trailing newline. */
export function formatMemoryFile(graph: KnowledgeGraph): string {
  return [...graph.entities.map(entityLine), ...graph.relations.map(relationLine)].join('\n');
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** An entity with every field Limbic keeps, as `limbic export` writes it. */
export interface ExportEntity {
  readonly name: string;
  readonly entityType: string;
  readonly status: EntityStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly project?: string | undefined;
  readonly observations: readonly { readonly content: string; readonly kind: string; readonly createdAt: number }[];
  readonly superseded: readonly SupersededLine[];
  readonly access?: { readonly count: number; readonly lastAccess: number; readonly days: readonly string[] } | undefined;
}

/**
 * One entity line of a Limbic export: the official keys first, in the official order (what the
 * official loader reads), then Limbic's, which it drops. Observations stay plain strings; their kinds
 * and times are parallel arrays. Times are ISO 8601 (UTC, milliseconds).
 */
export function limbicEntityLine(e: ExportEntity): string {
  return JSON.stringify({
    type: 'entity',
    name: e.name,
    entityType: e.entityType,
    observations: e.observations.map((o) => o.content),
    status: e.status,
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
    ...(e.project === undefined ? {} : { project: e.project }),
    observation_kinds: e.observations.map((o) => o.kind),
    observation_times: e.observations.map((o) => iso(o.createdAt)),
    ...(e.superseded.length === 0
      ? {}
      : {
          superseded_observations: e.superseded.map((s) => ({
            content: s.content,
            kind: s.kind,
            created_at: iso(s.createdAt),
            superseded_at: iso(s.supersededAt),
            superseded_by: s.supersededBy,
          })),
        }),
    ...(e.access === undefined ? {} : { access: { count: e.access.count, last_access: iso(e.access.lastAccess), days: e.access.days } }),
  });
}

/** A relation with every field Limbic keeps. */
export interface ExportRelation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  readonly context?: string | undefined;
  readonly createdAt: number;
  readonly endedAt?: number | undefined;
}

/** One relation line of a Limbic export: the official keys, then `context`, `created_at` and, once ended, `ended_at`. */
export function limbicRelationLine(r: ExportRelation): string {
  return JSON.stringify({
    type: 'relation',
    from: r.from,
    to: r.to,
    relationType: r.relationType,
    ...(r.context === undefined ? {} : { context: r.context }),
    created_at: iso(r.createdAt),
    ...(r.endedAt === undefined ? {} : { ended_at: iso(r.endedAt) }),
  });
}

/** The applied ranking parameters as a line of their own (one per memory, after its relations). */
export function rankingLine(r: RankingLine): string {
  return JSON.stringify({
    type: RANKING_LINE_TYPE,
    gamma: r.gamma,
    beta_sal: r.betaSal,
    rrf_k: r.rrfK,
    ...(r.tunedAt === undefined ? {} : { tuned_at: iso(r.tunedAt) }),
  });
}

/** How often two entities were used together, as a line of its own. */
export function coOccurrenceLine(c: CoOccurrenceLine): string {
  return JSON.stringify({ type: CO_OCCURRENCE_LINE_TYPE, a: c.a, b: c.b, count: c.count, last_co: iso(c.lastCo) });
}
