/**
 * service.capture(conversation, project): a conversation from any capture route (hook, transcript,
 * chat export) stored as one `session` entity whose observations are its turns (docs/capture.md,
 * "The stored shape"). In order: each turn redacted (the redactor every write uses), bare
 * acknowledgements skipped, cut to the capture bound, turns the session holds already skipped (a
 * Stop fired twice, a prompt seen by its hook and again in the transcript, an export imported twice
 * all store it once), the rest appended with the time each happened; a session past what one entity
 * may hold continues in `<name> part 2`, related `continues`. No LLM anywhere.
 */
import type { Project } from '../capture/project.js';
import type { Conversation, Turn } from '../capture/conversation.js';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import {
  boundTurn,
  CONTINUES,
  idTag,
  isDecision,
  partName,
  PROJECT_TYPE,
  SESSION_PART_OF,
  SESSION_TYPE,
  sessionName,
  SOURCE_LABELS,
  toolObservation,
  TURN_KINDS,
} from '../core/text/capture-text.js';
import { METADATA_KIND, type Relation } from '../core/types.js';
import type { CaptureStore, DatedObservation, Store } from '../store/store.js';

export interface CaptureResult {
  /** The session entity's name (its first part's, when it grew parts). */
  readonly session: string;
  /** Observations added: a user turn, a reply, a tool summary each. */
  readonly turnsAdded: number;
  /** Turns not stored: bare acknowledgements, and turns the session held already. */
  readonly turnsSkipped: number;
  /** What the redactor replaced, by type (never the values). */
  readonly redactions: readonly { readonly type: string; readonly count: number }[];
}

/** One text through the redactor every write uses (MemoryService.redact). */
export type RedactText = (
  text: string,
) => Promise<{ readonly text: string; readonly findings: readonly { readonly type: string; readonly count: number }[] }>;

export interface CaptureDeps {
  readonly store: Store;
  readonly clock: () => number;
  readonly redact: RedactText;
  /** Kicks the embedding of what was written, as every write does. */
  readonly afterWrite: () => void;
  /** Whether a turn only acknowledges ("ok", "thanks!"): it is not stored. */
  readonly isAcknowledgement: (text: string) => boolean;
}

/** The capture capability, or an error saying the backend lacks it. */
export function captureStore(store: Store): CaptureStore {
  if (store.capture !== undefined) return store.capture;
  throw new MemoryError(
    ERROR_CODES.STORE_FAILED,
    'This store cannot hold captured conversations (it has no capture capability). Use the SQLite or PostgreSQL backend.',
  );
}

/** A name of a session's part: its base and its number (1 for the base itself). */
function parsePart(name: string, base: string): number | undefined {
  if (name === base) return 1;
  const m = /^ part (\d+)$/.exec(name.slice(base.length));
  return name.startsWith(base) && m !== null ? Number(m[1]) : undefined;
}

/**
 * The metadata observation every session opens with: when it started, and its source's id, so a
 * later capture of it that dates it otherwise meets it. One observation, not two: an entity more
 * than half metadata ranks lower (docs/ranking.md), and a short session must not.
 */
const startObservation = (c: Conversation, startedAt: number): string =>
  `started: ${new Date(startedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC, ${idMark(c)}`;
const idMark = (c: Conversation): string => `conversation id: ${c.id}`;

export async function captureConversation(
  deps: CaptureDeps,
  conversation: Conversation,
  project: Project | undefined,
): Promise<CaptureResult> {
  const store = captureStore(deps.store);
  const now = deps.clock();
  const dated = conversation.turns.flatMap((t) => (t.at === undefined ? [] : [t.at]));
  const startedAt = conversation.startedAt ?? (dated.length > 0 ? Math.min(...dated) : now);

  const tally = new Map<string, number>();
  const redact = async (text: string): Promise<string> => {
    const r = await deps.redact(text);
    for (const f of r.findings) tally.set(f.type, (tally.get(f.type) ?? 0) + f.count);
    return r.text;
  };

  let skipped = 0;
  const observations: DatedObservation[] = [];
  for (const turn of conversation.turns) {
    const at = turn.at ?? conversation.startedAt ?? now;
    for (const o of turnObservations(turn)) {
      if (o.kind !== TURN_KINDS.tool && deps.isAcknowledgement(o.words)) {
        skipped++;
        continue;
      }
      observations.push({ content: boundTurn(await redact(o.content)), kind: o.kind, createdAt: at });
    }
  }

  const { base, parts } = await findSession(deps.store, store, conversation, startedAt);
  if (parts.length === 0 && observations.length === 0)
    return { session: base, turnsAdded: 0, turnsSkipped: skipped, redactions: tallied(tally) };

  // A new session opens with what it is: its title, when it started, its source's id (metadata).
  const head: DatedObservation[] = [];
  if (parts.length === 0) {
    const meta = (content: string): DatedObservation => ({ content, kind: METADATA_KIND, createdAt: startedAt });
    if (conversation.title !== undefined && conversation.title.trim() !== '')
      head.push(meta(boundTurn(`title: ${await redact(conversation.title.trim())}`, 1_000)));
    head.push(meta(startObservation(conversation, startedAt)));
  }

  let added = 0;
  const names = parts.length === 0 ? [base] : parts;
  let pending: readonly DatedObservation[] = [...head, ...observations];
  const relations: Relation[] = [];
  for (let n = names.length; ; n++) {
    const name = partName(base, n);
    if (!names.includes(name)) names.push(name);
    const result = await store.append(
      {
        name,
        entityType: SESSION_TYPE,
        project: project?.key,
        observations: pending,
        heldBy: names.filter((p) => p !== name),
        maxObservations: LIMITS.maxObservationsPerEntity,
        maxBytes: LIMITS.maxEntityTextBytes,
      },
      now,
    );
    added += result.added.filter((o) => o.kind !== METADATA_KIND).length;
    skipped += result.held;
    if (result.created) {
      if (project !== undefined) relations.push({ from: name, to: project.key, relationType: SESSION_PART_OF });
      if (n > 1) relations.push({ from: name, to: partName(base, n - 1), relationType: CONTINUES });
    }
    if (result.overflow.length === 0) break;
    if (result.created && result.added.length === 0)
      throw new MemoryError(ERROR_CODES.STORE_FAILED, `Session part ${name} could not take a single turn; nothing more was stored.`);
    pending = result.overflow;
  }
  if (relations.length > 0) {
    if (project !== undefined)
      await store.append(
        {
          name: project.key,
          entityType: PROJECT_TYPE,
          project: project.key,
          observations: [],
          maxObservations: LIMITS.maxObservationsPerEntity,
          maxBytes: LIMITS.maxEntityTextBytes,
        },
        now,
      );
    await deps.store.graph.createRelations(relations, now);
  }
  deps.afterWrite();
  return { session: base, turnsAdded: added, turnsSkipped: skipped, redactions: tallied(tally) };
}

/** A turn's observations before redaction, and the words the acknowledgement test reads. */
function turnObservations(turn: Turn): { content: string; kind: string; words: string }[] {
  const out: { content: string; kind: string; words: string }[] = [];
  const text = turn.text.trim();
  if (turn.role === 'user') {
    if (text !== '') out.push({ content: `user: ${text}`, kind: isDecision(text) ? TURN_KINDS.decision : TURN_KINDS.prompt, words: text });
    return out;
  }
  if (text !== '') out.push({ content: `assistant: ${text}`, kind: TURN_KINDS.reply, words: text });
  for (const tool of turn.tools ?? []) out.push({ content: toolObservation(tool), kind: TURN_KINDS.tool, words: '' });
  return out;
}

/**
 * The session's base name and its existing parts, first part first. A conversation captured before
 * is met by its source and id even when this capture dates its start otherwise (a hook reading a
 * transcript from the middle): its stored `conversation id` says which is this one.
 */
async function findSession(
  full: Store,
  store: CaptureStore,
  conversation: Conversation,
  startedAt: number,
): Promise<{ base: string; parts: string[] }> {
  const computed = sessionName(conversation.source, startedAt, conversation.id);
  const label = SOURCE_LABELS[conversation.source];
  const tag = idTag(conversation.id);
  const names = await store.namesStartingWith(`${label} `, ` ${tag}`, 1_000);
  const bases = [...new Set(names.filter((n) => new RegExp(`^${escape(label)} \\d{4}-\\d{2}-\\d{2} ${tag}$`).test(n)))];
  let base = bases.includes(computed) ? computed : undefined;
  for (const candidate of base === undefined ? bases : []) {
    const ids = await full.graph.idsByName([candidate]);
    const meta = await store.observationsOfKinds([METADATA_KIND], { project: undefined, ids, status: undefined, limit: 20 });
    if (meta.some((m) => m.observation.content.endsWith(idMark(conversation)))) {
      base = candidate;
      break;
    }
  }
  if (base === undefined) return { base: computed, parts: [] };
  const found = base;
  const parts = names
    .map((n) => ({ n, part: parsePart(n, found) }))
    .filter((p): p is { n: string; part: number } => p.part !== undefined)
    .sort((a, b) => a.part - b.part)
    .map((p) => p.n);
  return { base: found, parts };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function tallied(tally: ReadonlyMap<string, number>): { type: string; count: number }[] {
  return [...tally].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
}

/**
 * A minimal test for turns that only acknowledge, in English: what chat import's fuller
 * `isBareAcknowledgement` (in the capture folder's clean-text module: many languages and emoji) replaces when both land.
 */
const ACKNOWLEDGEMENTS = new Set(
  'ok|okay|k|yes|yep|yeah|sure|thanks|thank you|thx|ty|great|cool|nice|perfect|good|fine|got it|sounds good|lgtm|continue|go on|go ahead|proceed|done|please continue|yes please|ok thanks|okay thanks'.split(
    '|',
  ),
);

export function isBareAcknowledgement(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.trim() !== '' && !/[?]/.test(text) && (words === '' || ACKNOWLEDGEMENTS.has(words));
}
