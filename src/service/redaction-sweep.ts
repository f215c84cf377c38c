/**
 * `limbic redact`: what redaction would change in a memory written before it (or with it off), and
 * with `apply` the rewrite everywhere the backend keeps text (docs/redaction.md). The memory is read
 * a page at a time through the transfer capability, twice: once to find the secrets, once to take
 * out what is left of them in texts cut inside one (MIN_FRAGMENT). The report names entities by
 * their redacted name and says types and counts, never a value.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import {
  RedactionTally,
  redactFragments,
  secretsReplaced,
  type FoundSecret,
  type RedactionCount,
  type Redactor,
} from '../core/text/redaction.js';
import type { EntityRecord, RelationRecord, Store, TextRewriteOutcome, TransferStore } from '../store/store.js';

/** Records read per page. */
const PAGE = 500;
/** Entities listed in the report; the counts cover every one. */
const LISTED = 200;

export interface EntityFinding {
  /** The entity's name as it is (or will be) stored: redacted. */
  readonly entity: string;
  /** What of it changes: name, type, observations, superseded. */
  readonly fields: readonly string[];
  readonly redactions: readonly RedactionCount[];
}

export interface SweepReport {
  readonly applied: boolean;
  readonly scanned: { readonly entities: number; readonly observations: number; readonly superseded: number; readonly relations: number };
  /** How many of each would change (or changed). */
  readonly changes: {
    readonly entities: number;
    readonly names: number;
    readonly types: number;
    readonly observations: number;
    readonly superseded: number;
    readonly relations: number;
  };
  readonly redactions: readonly RedactionCount[];
  readonly entities: readonly EntityFinding[];
  /** Entities with changes left out of `entities` (the list is capped). */
  readonly moreEntities: number;
  /** With apply: what the store did. */
  readonly rewrite?: TextRewriteOutcome;
  readonly purged?: readonly string[];
}

/** Every page of the memory's entities. */
async function* entityPages(transfer: TransferStore): AsyncGenerator<readonly EntityRecord[]> {
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readEntities(cursor, PAGE);
    cursor = page.next;
    yield page.records;
  }
}

async function* relationPages(transfer: TransferStore): AsyncGenerator<readonly RelationRecord[]> {
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readRelations(cursor, PAGE);
    cursor = page.next;
    yield page.records;
  }
}

/** Every text an entity stores: name, type, observations, superseded observations and what superseded them. */
const entityTexts = (e: EntityRecord): string[] => [
  e.name,
  e.entityType,
  ...e.observations.map((o) => o.content),
  ...e.superseded.flatMap((s) => [s.content, s.supersededBy]),
];

const relationTexts = (r: RelationRecord): string[] => [r.from, r.to, r.relationType, r.context ?? ''];

/** Marks of each type in a text. */
function marksIn(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const m of text.matchAll(/\[REDACTED:([a-z0-9-]+)\]/g)) found.set(m[1] ?? '', (found.get(m[1] ?? '') ?? 0) + 1);
  return found;
}

/** Marks `after` holds beyond those `before` held: what redacting it found. */
function found(before: string, after: string): RedactionCount[] {
  const had = marksIn(before);
  return [...marksIn(after)].flatMap(([type, n]) => (n > (had.get(type) ?? 0) ? [{ type, count: n - (had.get(type) ?? 0) }] : []));
}

/**
 * Scans the whole memory with `redactor`; with `apply`, rewrites every changed text in place and
 * purges what the backend still holds of the old text.
 */
export async function sweepRedactions(store: Store, redactor: Redactor, options: { apply: boolean; now: number }): Promise<SweepReport> {
  const transfer = store.transfer;
  if (transfer === undefined)
    throw new MemoryError(ERROR_CODES.INVALID_INPUT, 'This storage backend cannot be read whole, so it cannot be scanned for secrets.');
  if (options.apply && store.rewrite === undefined)
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      'This storage backend cannot rewrite stored text in place; run "limbic redact" without --apply to see what it holds.',
    );
  // Pass 1: what the rules find in each text, and the secrets they found there.
  const byRules = new Map<string, string>();
  const secrets = new Map<string, FoundSecret>();
  const scan = async (texts: readonly string[]): Promise<void> => {
    const out = await redactor.redactAll(texts);
    texts.forEach((text, i) => {
      const after = out.texts[i] ?? text;
      if (after === text) return;
      byRules.set(text, after);
      for (const secret of secretsReplaced(text, after)) secrets.set(secret.value, secret);
    });
  };
  for await (const page of entityPages(transfer)) await scan(page.flatMap(entityTexts));
  for await (const page of relationPages(transfer)) await scan(page.flatMap(relationTexts));

  // Pass 2: each text as it will be stored (what is left of a secret found elsewhere goes too: a
  // name cut from the start of what an entity holds), counted per entity.
  const known = [...secrets.values()];
  const changes = new Map<string, string>();
  const tally = new RedactionTally();
  const scanned = { entities: 0, observations: 0, superseded: 0, relations: 0 };
  const counted = { entities: 0, names: 0, types: 0, observations: 0, superseded: 0, relations: 0 };
  const listed: EntityFinding[] = [];
  let more = 0;
  /** What storing `text` redacted in it. */
  const findingsOf = (text: string): RedactionCount[] => {
    const after = redactFragments(byRules.get(text) ?? text, known).text;
    if (after === text) return [];
    changes.set(text, after);
    return found(text, after);
  };
  for await (const page of entityPages(transfer)) {
    for (const e of page) {
      scanned.entities++;
      scanned.observations += e.observations.length;
      scanned.superseded += e.superseded.length;
      const [name, type] = [findingsOf(e.name), findingsOf(e.entityType)];
      const obs = e.observations.map((o) => findingsOf(o.content));
      const sup = e.superseded.map((x) => [...findingsOf(x.content), ...findingsOf(x.supersededBy)]);
      const changedObs = obs.filter((f) => f.length > 0).length;
      const changedSup = sup.filter((f) => f.length > 0).length;
      const fields = [
        ...(name.length > 0 ? ['name'] : []),
        ...(type.length > 0 ? ['type'] : []),
        ...(changedObs > 0 ? [`observations: ${changedObs}`] : []),
        ...(changedSup > 0 ? [`superseded: ${changedSup}`] : []),
      ];
      if (fields.length === 0) continue;
      const own = new RedactionTally();
      for (const f of [name, type, ...obs, ...sup]) own.add(f);
      tally.add(own.counts());
      counted.entities++;
      if (name.length > 0) counted.names++;
      if (type.length > 0) counted.types++;
      counted.observations += changedObs;
      counted.superseded += changedSup;
      if (listed.length < LISTED) listed.push({ entity: changes.get(e.name) ?? e.name, fields, redactions: own.counts() });
      else more++;
    }
  }
  for await (const page of relationPages(transfer)) {
    for (const r of page) {
      scanned.relations++;
      const [from, to, type, context] = relationTexts(r).map(findingsOf);
      if ([from, to, type, context].every((f) => f === undefined || f.length === 0)) continue;
      counted.relations++;
      // An end naming an entity was counted with the entity.
      tally.add([...(type ?? []), ...(context ?? [])]);
    }
  }

  const report: SweepReport = {
    applied: false,
    scanned,
    changes: counted,
    redactions: tally.counts(),
    entities: listed,
    moreEntities: more,
  };
  if (!options.apply || store.rewrite === undefined) return report;
  const rewrite = await store.rewrite.rewriteTexts(changes, options.now);
  const purged = await store.rewrite.purge();
  return { ...report, applied: true, rewrite, purged };
}
