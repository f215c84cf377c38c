/**
 * What one hook event does (docs/hooks.md), given the parts it needs: SessionStart prints the
 * project's brief in the shape the client injects; UserPromptSubmit, Stop, PreCompact and
 * SessionEnd (and the other clients' names for them) capture what the session said since the
 * last event. Claude Code's transcript is read from where the previous event stopped (its offset
 * kept in HookState, under a per-session lock, and moved on only once the turns are stored);
 * clients without a transcript Limbic reads give their prompt and reply in the hook's own fields.
 * Every route ends in the service's capture(), which redacts, skips what the session already
 * holds and stores; nothing here loads a model.
 */
import { existsSync } from 'node:fs';
import type { Conversation, Turn } from './conversation.js';
import type { HookClient, HookInput } from './hook-input.js';
import { HookState } from './hook-state.js';
import type { Project } from './project.js';

/** What the service's capture() reports (src/service/capture.ts). */
export interface HookCaptureResult {
  readonly session: string;
  readonly turnsAdded: number;
  readonly turnsSkipped: number;
  readonly redactions: readonly { readonly type: string; readonly count: number }[];
}

/** The memory as a hook uses it: opened on first need, closed at the end of the event. */
export interface HookMemory {
  /** The project's brief (service.brief: fenced, within 2,000 tokens and under 10,000 characters), '' when there is nothing to say. */
  brief(project: Project | undefined): Promise<string>;
  capture(conversation: Conversation, project: Project | undefined): Promise<HookCaptureResult>;
  close(): Promise<void>;
}

export interface HookParts {
  /** Capture on (LIMBIC_CAPTURE=0 turns it off); off, the capture events store nothing. */
  readonly capture: boolean;
  /** Brief on (LIMBIC_BRIEF=0 turns it off); off, SessionStart prints nothing. */
  readonly brief: boolean;
  /** Names the memory in offset keys (the database and namespace; hashed, never stored as is). */
  readonly memoryId: string;
  /** False when the memory does not exist yet: SessionStart has nothing to say and creates nothing. */
  readonly memoryExists: boolean;
  readonly state: HookState;
  resolveProject(cwd: string | undefined): Promise<Project | undefined>;
  /** Claude Code's transcript from a byte offset (chat import's reader). */
  readTranscript(path: string, fromOffset: number): Promise<{ conversations: readonly Conversation[]; nextOffset: number }>;
  /** Strips client chrome and Limbic's own brief from a hook field's text (clean-text.ts). */
  cleanText(text: string): string;
  openMemory(): HookMemory;
  now(): number;
}

/** How long a hook waits for another hook of the same session before leaving the work to the next event. */
export const SESSION_LOCK_WAIT_MS = 10_000;

/**
 * SessionStart's stdout for the client whose file holds the entry: Claude Code, VS Code, Codex and
 * Gemini CLI read `hookSpecificOutput.additionalContext` (Gemini CLI reads nothing but JSON, so it
 * gets `{}` when there is nothing to say); Cursor's own hooks.json reads `additional_context`.
 */
export function briefOutput(declared: HookClient, brief: string): string {
  if (declared === 'cursor') return JSON.stringify(brief === '' ? {} : { additional_context: brief });
  if (brief === '') return declared === 'gemini' ? '{}' : '';
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: brief } });
}

/** The brief of the session's project, shaped for the client (briefOutput); empty when off or nothing is known yet. */
export async function sessionStart(input: HookInput, declared: HookClient, parts: HookParts): Promise<string> {
  if (!parts.brief || !parts.memoryExists) return briefOutput(declared, '');
  const project = await parts.resolveProject(input.cwd);
  const memory = parts.openMemory();
  try {
    return briefOutput(declared, await memory.brief(project));
  } finally {
    await memory.close();
  }
}

/** What a capture event did, for the log and for tests. */
export interface CaptureOutcome {
  readonly done: 'captured' | 'off' | 'nothing' | 'busy';
  readonly turnsAdded: number;
  readonly turnsSkipped: number;
  /** Where the transcript was read up to, when one was read. */
  readonly offset?: number | undefined;
}

const NOTHING: CaptureOutcome = { done: 'nothing', turnsAdded: 0, turnsSkipped: 0 };

/** Clients whose transcript is Claude Code's JSONL (VS Code's and Cursor's are their own formats: their hook fields are used). */
const readsClaudeTranscript = (client: HookClient): boolean => client === 'claude-code';

/**
 * Captures what the session said since the previous event. With Claude Code's transcript: the new
 * complete lines, threaded by the reader; the offset moves on only once they are stored, so a
 * failure is retried by the next event and a Stop fired twice reads nothing twice. Otherwise the
 * event's own prompt and reply, cleaned like transcript text. The session's start is kept with its
 * offset, so every event of a session names the same session entity.
 */
export async function captureEvent(input: HookInput, parts: HookParts): Promise<CaptureOutcome> {
  if (!parts.capture) return { ...NOTHING, done: 'off' };
  const transcript =
    input.transcriptPath !== undefined && readsClaudeTranscript(input.client) && existsSync(input.transcriptPath)
      ? input.transcriptPath
      : undefined;
  const sessionId = input.sessionId ?? transcript?.replace(/^.*[\\/]/, '').replace(/\.jsonl$/i, '');
  if (sessionId === undefined) return NOTHING;

  const key = HookState.key(parts.memoryId, sessionId, transcript ?? '');
  const release = await parts.state.lock(key, SESSION_LOCK_WAIT_MS, () => parts.now());
  if (release === undefined) return { ...NOTHING, done: 'busy' };
  try {
    const mark = parts.state.mark(key);
    let conversations: readonly Conversation[];
    let offset: number | undefined;
    if (transcript !== undefined) {
      const read = await parts.readTranscript(transcript, mark?.offset ?? 0);
      conversations = read.conversations;
      offset = read.nextOffset;
    } else {
      const startedAt = mark?.startedAt ?? parts.now();
      const turns = fieldTurns(input, parts);
      conversations = turns.length === 0 ? [] : [{ source: input.client, id: sessionId, cwd: input.cwd, startedAt, turns }];
      if (mark === undefined) parts.state.setMark(key, { transcript: '', offset: 0, startedAt }, parts.now());
    }
    if (conversations.length === 0) {
      if (transcript !== undefined && offset !== mark?.offset) parts.state.setMark(key, { transcript, offset: offset ?? 0 }, parts.now());
      return { ...NOTHING, offset };
    }
    const project = await parts.resolveProject(input.cwd ?? conversations[0]?.cwd);
    const memory = parts.openMemory();
    let added = 0;
    let skipped = 0;
    try {
      for (const conversation of conversations) {
        const result = await memory.capture(conversation, project);
        added += result.turnsAdded;
        skipped += result.turnsSkipped;
      }
    } finally {
      await memory.close();
    }
    if (transcript !== undefined) parts.state.setMark(key, { transcript, offset: offset ?? 0 }, parts.now());
    return { done: 'captured', turnsAdded: added, turnsSkipped: skipped, offset };
  } finally {
    release();
  }
}

/** The turns a hook's own fields carry: the prompt (a user turn), then the reply (an assistant turn). */
function fieldTurns(input: HookInput, parts: HookParts): Turn[] {
  const at = parts.now();
  const turns: Turn[] = [];
  const prompt = input.prompt === undefined ? '' : parts.cleanText(input.prompt);
  // Gemini CLI's AfterAgent repeats the prompt beside its reply; the service stores it once.
  if (prompt !== '' && (input.event === 'prompt' || input.reply !== undefined)) turns.push({ role: 'user', text: prompt, at });
  const reply = input.reply === undefined ? '' : parts.cleanText(input.reply);
  if (reply !== '') turns.push({ role: 'assistant', text: reply, at });
  return turns;
}
