/**
 * The official `memory.jsonl` format (docs/migrating.md): parsing one line with
 * the field variants seen in the wild, and writing lines exactly as the official server does.
 */
import { toNfc } from './text/fold.js';
import type { KnowledgeGraph, NewEntity, Relation } from './types.js';

export type ParsedLine =
  | { readonly kind: 'entity'; readonly entity: NewEntity }
  | { readonly kind: 'relation'; readonly relation: Relation }
  | { readonly kind: 'blank' }
  | { readonly kind: 'ignored'; readonly reason: string }
  | { readonly kind: 'error'; readonly reason: string };

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
    return { kind: 'error', reason: `not valid JSON (${(error as Error).message})` };
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
    // Limbic's export marks a relation end_relation ended; it is imported ended (a bad date is refused, not read as current).
    if (record.ended_at === undefined) return { kind: 'relation', relation };
    const ended = typeof record.ended_at === 'string' ? Date.parse(record.ended_at) : Number.NaN;
    if (Number.isNaN(ended)) return { kind: 'error', reason: '"ended_at" must be an ISO 8601 date, as limbic export writes it' };
    return { kind: 'relation', relation: { ...relation, ended_at: new Date(ended).toISOString() } };
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
    return {
      kind: 'entity',
      entity: { name: toNfc(name.value), entityType: toNfc(entityType?.value ?? 'entity'), observations: observations.map(toNfc) },
    };
  }
  return { kind: 'ignored', reason: `line of type ${JSON.stringify(record.type ?? null)}` };
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
