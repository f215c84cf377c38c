/**
 * What a client's lifecycle hook hands `limbic hook EVENT` on stdin, made one shape whatever the
 * client: Claude Code, Codex and Gemini CLI send snake_case (`session_id`, `transcript_path`,
 * `hook_event_name`), VS Code camelCase beside a snake_case `transcript_path` (`sessionId`,
 * `hookEventName`), Cursor `conversation_id` and `workspace_roots`. Unknown fields are ignored;
 * a field of the wrong type counts as absent. Pure: no I/O (docs/hooks.md lists each client's fields).
 */
import type { ConversationSource } from './conversation.js';

/** The moments Limbic acts on, in its own words; each client names them its own way (HOOK_EVENT_NAMES). */
export const HOOK_EVENTS = ['session-start', 'prompt', 'reply', 'stop', 'pre-compact', 'session-end'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The clients whose hook files `limbic hooks install` writes or explains. */
export const HOOK_CLIENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'vscode'] as const;
export type HookClient = (typeof HOOK_CLIENTS)[number];

/**
 * Each client's name for each event, as its hook files spell it (and as it arrives in
 * `hook_event_name`): Claude Code, Codex and VS Code share Claude Code's; Gemini CLI says BeforeAgent
 * for a prompt and AfterAgent when a turn ends; Cursor uses lowerCamelCase and reports the
 * assistant's words in afterAgentResponse.
 */
export const HOOK_EVENT_NAMES: Readonly<Record<HookEvent, readonly string[]>> = {
  'session-start': ['SessionStart', 'sessionStart'],
  prompt: ['UserPromptSubmit', 'BeforeAgent', 'beforeSubmitPrompt', 'userPromptSubmitted'],
  reply: ['afterAgentResponse'],
  stop: ['Stop', 'AfterAgent', 'stop'],
  'pre-compact': ['PreCompact', 'PreCompress', 'preCompact'],
  'session-end': ['SessionEnd', 'sessionEnd'],
};

/** Our event for a name on the command line or in `hook_event_name` (any client's spelling, or ours). */
export function hookEventOf(name: string): HookEvent | undefined {
  const key = name.trim();
  const ours = HOOK_EVENTS.find((e) => e === key.toLowerCase());
  if (ours !== undefined) return ours;
  const lower = key.toLowerCase();
  return HOOK_EVENTS.find((e) => HOOK_EVENT_NAMES[e].some((n) => n.toLowerCase() === lower));
}

export interface HookInput {
  readonly event: HookEvent;
  /** Who is calling: the entry's `--client`, corrected from the input (VS Code and Cursor run Claude Code's entries). */
  readonly client: HookClient;
  readonly sessionId: string | undefined;
  /** The session's transcript file, where the client keeps one. */
  readonly transcriptPath: string | undefined;
  /** The folder the session runs in (Cursor: its first workspace root). */
  readonly cwd: string | undefined;
  /** The user's prompt (UserPromptSubmit, BeforeAgent, beforeSubmitPrompt; Gemini's AfterAgent too). */
  readonly prompt: string | undefined;
  /** The assistant's last reply (Stop's `last_assistant_message`, AfterAgent's `prompt_response`, afterAgentResponse's `text`). */
  readonly reply: string | undefined;
  /** Why the event fired: SessionStart's `source`, SessionEnd's `reason`, PreCompact's `trigger`. */
  readonly why: string | undefined;
}

type Json = Readonly<Record<string, unknown>>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first of `keys` holding a non-empty string. */
function text(input: Json, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const v = input[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

function firstOf(input: Json, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const v = input[key];
    if (Array.isArray(v) && typeof v[0] === 'string' && v[0] !== '') return v[0];
  }
  return undefined;
}

/**
 * Which client sent this input when the entry says `claude-code`: VS Code and Cursor run the hooks
 * in Claude Code's settings files too. VS Code writes `hookEventName` where Claude Code writes
 * `hook_event_name`; Cursor adds `cursor_version`, `conversation_id` or `workspace_roots`.
 */
function detectClient(input: Json, declared: HookClient): HookClient {
  if (declared !== 'claude-code') return declared;
  if ('cursor_version' in input || 'conversation_id' in input || 'workspace_roots' in input) return 'cursor';
  if (!('hook_event_name' in input) && ('hookEventName' in input || 'sessionId' in input)) return 'vscode';
  return 'claude-code';
}

/** The Conversation source a hook's turns are stored under (part of the session entity's name). */
export function sourceOf(client: HookClient): ConversationSource {
  return client;
}

/**
 * One hook input, normalised. `event` and `client` come from the entry's command line when it names
 * them, else from the input (`hook_event_name`); undefined when neither says which event this is.
 *
 * @example readHookInput({ hook_event_name: 'Stop', session_id: 's1', last_assistant_message: 'Done.' }, { client: 'claude-code' })
 */
export function readHookInput(input: unknown, declared: { event?: HookEvent | undefined; client: HookClient }): HookInput | undefined {
  const json: Json = isObject(input) ? input : {};
  const named = text(json, 'hook_event_name', 'hookEventName');
  const event = declared.event ?? (named === undefined ? undefined : hookEventOf(named));
  if (event === undefined) return undefined;
  const client = detectClient(json, declared.client);
  return {
    event,
    client,
    sessionId: text(json, 'session_id', 'sessionId', 'conversation_id', 'conversationId'),
    transcriptPath: text(json, 'transcript_path', 'transcriptPath'),
    cwd: text(json, 'cwd') ?? firstOf(json, 'workspace_roots', 'workspaceRoots'),
    prompt: text(json, 'prompt'),
    reply: text(
      json,
      'last_assistant_message',
      'lastAssistantMessage',
      'prompt_response',
      'promptResponse',
      ...(event === 'reply' ? ['text'] : []),
    ),
    why: text(json, 'source', 'reason', 'trigger'),
  };
}
