/**
 * What every capture route hands the service: a conversation as a thread of turns, read from a
 * client's hook event, a transcript or a chat export (one reader per client and format, under
 * src/capture/readers/), with the client's chrome already stripped (clean-text.ts). The service
 * redacts, deduplicates and stores it (src/service/capture.ts); no LLM anywhere on the way.
 *
 * How a conversation is stored (docs/capture.md): one entity of type `session` per conversation,
 * its turns as observations (`user: …` of kind `prompt`, `assistant: …` of kind `reply`, tool
 * summaries of kind `tool`) dated when each turn happened, `part_of` the project it ran in. A turn
 * already stored in that session is not stored again, so a hook fired twice, a prompt seen by its
 * hook and again in the transcript, or an export imported twice adds nothing.
 */

/** Where a conversation came from; part of its session entity's name, so ids of two sources never collide. */
export const CONVERSATION_SOURCES = ['claude-code', 'codex', 'gemini', 'cursor', 'vscode', 'chatgpt', 'claude-ai'] as const;
export type ConversationSource = (typeof CONVERSATION_SOURCES)[number];

/** One tool call, summarised: which tool, on what, and the first lines of what it returned. */
export interface ToolSummary {
  /** The tool's name as the client calls it (`Bash`, `Edit`, `mcp__github__create_issue`). */
  readonly tool: string;
  /** What it acted on, in a few words: a file path, a command, a query. Empty when nothing says. */
  readonly target: string;
  /** The first lines of its result (bounded by the reader), empty when none was recorded. */
  readonly result: string;
  /** The call failed (an error result). */
  readonly failed?: boolean | undefined;
}

export interface Turn {
  readonly role: 'user' | 'assistant';
  /**
   * The turn's words, verbatim after the client's chrome and Limbic's own brief were stripped.
   * May be empty for an assistant turn that only called tools.
   */
  readonly text: string;
  /** Tool calls the assistant made in this turn, in order (never set on user turns). */
  readonly tools?: readonly ToolSummary[] | undefined;
  /** When the turn happened, epoch ms; undefined when the source does not say. */
  readonly at?: number | undefined;
  /** The source's own id of the message (a uuid, a node id), for readers' threading and for tests. */
  readonly sourceId?: string | undefined;
}

export interface Conversation {
  readonly source: ConversationSource;
  /** The source's id of the conversation or session (Claude Code's sessionId, ChatGPT's conversation id…). */
  readonly id: string;
  /** Its title where the source has one (ChatGPT, Claude.ai); undefined otherwise. */
  readonly title?: string | undefined;
  /** The folder it ran in, where the source says (coding agents); the project is resolved from it. */
  readonly cwd?: string | undefined;
  /** When it started, epoch ms, where known (else the first dated turn's time). */
  readonly startedAt?: number | undefined;
  /** The visible thread, oldest first: branches the user regenerated or rewound away are not in it. */
  readonly turns: readonly Turn[];
}

/**
 * The fence around Limbic's brief wherever it is injected (SessionStart). Readers strip everything
 * between the two markers, so a brief that reached a transcript is never captured back.
 */
export const BRIEF_OPEN = '<limbic-memory-brief';
export const BRIEF_CLOSE = '</limbic-memory-brief>';
