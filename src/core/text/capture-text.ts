/**
 * How a captured conversation reads as observations (docs/capture.md, "The stored shape"): the
 * session's name, each turn's text and kind, tool summaries, the per-turn bound. Pure: the service
 * (src/service/capture.ts) redacts, deduplicates and stores what these make.
 */

/** How each source names its conversations: coding agents run sessions, chat apps hold conversations. */
export const SOURCE_LABELS = {
  'claude-code': 'Claude Code session',
  codex: 'Codex session',
  gemini: 'Gemini CLI session',
  cursor: 'Cursor session',
  vscode: 'VS Code session',
  chatgpt: 'ChatGPT conversation',
  'claude-ai': 'Claude.ai conversation',
} as const;

/** The entity types capture writes. */
export const SESSION_TYPE = 'session';
export const PROJECT_TYPE = 'project';
/** The relations it writes: a session to its project, a part to the part it continues. */
export const SESSION_PART_OF = 'part_of';
export const CONTINUES = 'continues';

/** Observation kinds of captured turns. `decision` is a user turn that settles something (isDecision). */
export const TURN_KINDS = { prompt: 'prompt', reply: 'reply', tool: 'tool', decision: 'decision' } as const;

/**
 * Characters of one captured turn; a longer one is cut with a marker saying how much was left out.
 * Below the 20,000 of any observation (LIMITS.maxObservationChars) so that a session of 1,000 turns
 * stays under the 4 MiB one entity may hold, a search answer showing a turn stays readable, and what
 * a turn is about is almost always in its first 8,000 characters: long turns are pasted logs, files
 * and generated code, whose tail the person rarely asks back for.
 */
export const CAPTURE_TURN_CHARS = 8_000;
/** Lines and characters of a tool's result kept in its summary. */
export const TOOL_RESULT_LINES = 3;
export const TOOL_RESULT_CHARS = 300;
export const TOOL_TARGET_CHARS = 200;

/** The first 8 letters and digits of a source's id: enough to tell two conversations of one day apart. */
export function idTag(id: string): string {
  const tag = id.replace(/[^A-Za-z0-9]/g, '').slice(0, 8);
  return tag === '' ? 'unnamed' : tag;
}

/** YYYY-MM-DD in UTC. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * The session entity's name, the same for a hook and a later import of the same conversation.
 * @example sessionName('claude-code', Date.UTC(2026, 10, 27), '3f2a9c1e-77…') // 'Claude Code session 2026-11-27 3f2a9c1e'
 */
export function sessionName(source: keyof typeof SOURCE_LABELS, startedAt: number, id: string): string {
  return `${SOURCE_LABELS[source]} ${utcDay(startedAt)} ${idTag(id)}`;
}

/** The name of part `n` (n ≥ 2) of a session that outgrew one entity. */
export const partName = (base: string, n: number): string => (n <= 1 ? base : `${base} part ${n}`);

/** A turn cut to the capture bound, with a marker saying how much was left out. */
export function boundTurn(text: string, max = CAPTURE_TURN_CHARS): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  // The marker's own length (at most 40) comes out of the kept text, so the whole stays within max.
  const keep = max - 40;
  return `${chars.slice(0, keep).join('')} … [cut: ${chars.length - keep} more characters]`;
}

/** One line of text, at most `max` characters. */
function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/**
 * A tool call as one observation: which tool, on what, the first lines of what it returned.
 * @example toolObservation({ tool: 'Bash', target: 'npm test', result: '12 passed' }) // 'tool Bash npm test → 12 passed'
 */
export function toolObservation(t: {
  readonly tool: string;
  readonly target: string;
  readonly result: string;
  readonly failed?: boolean | undefined;
}): string {
  const result = t.result
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .slice(0, TOOL_RESULT_LINES)
    .join(' / ');
  const head = ['tool', oneLine(t.tool, 100), oneLine(t.target, TOOL_TARGET_CHARS)].filter((s) => s !== '').join(' ');
  const tail = oneLine(result, TOOL_RESULT_CHARS);
  return `${head}${t.failed === true ? ' (failed)' : ''}${tail === '' ? '' : ` → ${tail}`}`;
}

/**
 * Phrases that settle something: "we decided…", "let's go with…", "from now on…", "never push to
 * main". Kept conservative and explicit (no model decides): a user turn saying one is stored with
 * kind `decision`, which the brief lists as an open decision.
 */
const DECISION_PATTERNS: readonly RegExp[] = [
  /\b(?:we|i)(?:\s+have|'ve|\s+just)?\s+decided\b/i,
  /\bdecision\s*:/i,
  /\blet'?s\s+(?:go\s+with|stick\s+(?:with|to)|use|switch\s+to|keep)\b/i,
  /\bwe(?:'ll|\s+will|\s+should)\s+(?:go\s+with|use|stick\s+(?:with|to)|switch\s+to)\b/i,
  /\bfrom\s+now\s+on\b/i,
  /\b(?:always|never)\s+(?:use|do|run|commit|push|merge|deploy|call|add|write)\b/i,
  /(?<!\p{L})(?:décidé|on\s+part\s+sur|decidimos|hemos\s+decidido|vamos\s+con|entschieden|beschlossen|abbiamo\s+deciso)(?!\p{L})/iu,
];

/** Whether a user turn states a decision (DECISION_PATTERNS). */
export const isDecision = (text: string): boolean => DECISION_PATTERNS.some((p) => p.test(text));
