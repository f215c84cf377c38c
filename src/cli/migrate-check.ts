/**
 * The check at the end of `limbic migrate`: what the target holds, compared with the source, so a
 * copy that lost something says so instead of reporting success (issue 35: a rerun after a killed
 * migration once reported success over entities that had lost their kinds and times).
 *
 * Counts per table first (the target holds at least the source's rows: it may have held more of its
 * own), then every source entity and relation field by field against the target's of the same name:
 * type, status, times and project; each observation with its kind and time; each superseded
 * observation; usage at least the source's; each relation's context, time and end. Vectors are not
 * compared: a vector not copied is queued, and made in the target. Read a page at a time, as the copy.
 */
import type { EntityRecord, RelationRecord, TransferCounts, TransferStore } from '../store/transfer-store.js';

export interface MigrateCheck {
  readonly source: TransferCounts;
  readonly target: TransferCounts;
  /** How many entities and relations differ (or are missing), and count rows the target lacks. */
  readonly differences: number;
  /** The first differences, each in words. */
  readonly examples: readonly string[];
}

/** Differences written out in the report; the count covers them all. */
const EXAMPLES = 20;

export async function checkCopy(source: TransferStore, target: TransferStore, pageSize: number): Promise<MigrateCheck> {
  const examples: string[] = [];
  let differences = 0;
  const note = (text: string): void => {
    differences++;
    if (examples.length < EXAMPLES) examples.push(text);
  };
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await source.readEntities(cursor, pageSize);
    const held = new Map((await target.readEntitiesNamed(page.records.map((r) => r.name))).map((r) => [r.name, r]));
    for (const wanted of page.records) {
      const found = held.get(wanted.name);
      const why = found === undefined ? 'is missing' : entityDifference(wanted, found);
      if (why !== undefined) note(`entity ${JSON.stringify(wanted.name)} ${why}`);
    }
    cursor = page.next;
  }
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await source.readRelations(cursor, pageSize);
    const key = (r: RelationRecord): string => JSON.stringify([r.from, r.to, r.relationType]);
    const held = new Map((await target.readRelationsKeyed(page.records)).map((r) => [key(r), r]));
    for (const wanted of page.records) {
      const found = held.get(key(wanted));
      const why = found === undefined ? 'is missing' : relationDifference(wanted, found);
      if (why !== undefined) note(`relation ${wanted.from} -[${wanted.relationType}]-> ${wanted.to} ${why}`);
    }
    cursor = page.next;
  }
  const [sourceCounts, targetCounts] = await Promise.all([source.counts(), target.counts()]);
  for (const table of Object.keys(sourceCounts) as (keyof TransferCounts)[]) {
    if (targetCounts[table] < sourceCounts[table])
      note(`the target has ${targetCounts[table]} ${table}, the source ${sourceCounts[table]}`);
  }
  return { source: sourceCounts, target: targetCounts, differences, examples };
}

/** What differs between an entity and its copy, in words; undefined when the copy holds all of it. */
export function entityDifference(wanted: EntityRecord, found: EntityRecord): string | undefined {
  const differs: string[] = [];
  const field = (name: string, a: unknown, b: unknown): void => {
    if (a !== b) differs.push(`${name} ${JSON.stringify(b)} instead of ${JSON.stringify(a)}`);
  };
  field('type', wanted.entityType, found.entityType);
  field('status', wanted.status, found.status);
  field('createdAt', wanted.createdAt, found.createdAt);
  if (wanted.project !== undefined) field('project', wanted.project, found.project);
  const observations = new Map(found.observations.map((o) => [o.content, o]));
  for (const o of wanted.observations) {
    const copy = observations.get(o.content);
    if (copy === undefined) differs.push(`the observation ${JSON.stringify(o.content)} is missing`);
    else if (copy.kind !== o.kind || copy.createdAt !== o.createdAt)
      differs.push(
        `the observation ${JSON.stringify(o.content)} is ${copy.kind} at ${copy.createdAt} instead of ${o.kind} at ${o.createdAt}`,
      );
  }
  // Changed when it took observations the source lacks (a merge); otherwise as in the source.
  const merged = found.observations.length > wanted.observations.length;
  if (merged ? found.updatedAt < wanted.updatedAt : found.updatedAt !== wanted.updatedAt)
    field('updatedAt', wanted.updatedAt, found.updatedAt);
  const history = new Set(found.superseded.map((s) => JSON.stringify([s.content, s.kind, s.createdAt, s.supersededAt, s.supersededBy])));
  for (const s of wanted.superseded) {
    if (!history.has(JSON.stringify([s.content, s.kind, s.createdAt, s.supersededAt, s.supersededBy])))
      differs.push(`the superseded observation ${JSON.stringify(s.content)} is missing`);
  }
  if (wanted.access !== undefined) {
    const access = found.access;
    const days = new Set(access?.days ?? []);
    if (
      access === undefined ||
      access.count < wanted.access.count ||
      access.lastAccess < wanted.access.lastAccess ||
      wanted.access.days.some((d) => !days.has(d))
    )
      differs.push("its usage is below the source's");
  }
  return differs.length === 0 ? undefined : `differs: ${differs.join('; ')}`;
}

export function relationDifference(wanted: RelationRecord, found: RelationRecord): string | undefined {
  const differs: string[] = [];
  if ((wanted.context ?? null) !== (found.context ?? null))
    differs.push(`context ${JSON.stringify(found.context ?? null)} instead of ${JSON.stringify(wanted.context ?? null)}`);
  if (wanted.createdAt !== found.createdAt) differs.push(`createdAt ${found.createdAt} instead of ${wanted.createdAt}`);
  if ((wanted.endedAt ?? null) !== (found.endedAt ?? null))
    differs.push(`endedAt ${found.endedAt ?? 'none (current)'} instead of ${wanted.endedAt ?? 'none (current)'}`);
  return differs.length === 0 ? undefined : `differs: ${differs.join('; ')}`;
}
