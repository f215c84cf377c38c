/**
 * Claude Code transcripts in the shape Claude Code writes them (`~/.claude/projects/<folder>/<session>.jsonl`,
 * see src/capture/readers/claude-code.ts): one entry a line, threaded by `parentUuid`; a user
 * prompt as a string with the client's `<system-reminder>` chrome; an assistant API message split
 * over one line per content block sharing its `message.id`; tool results as user lines; progress
 * and file-history-snapshot lines between. And the JSON Claude Code sends each hook on stdin.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export class ClaudeTranscript {
  private last: string | null = null;
  private n = 0;
  private at: number;

  constructor(
    readonly path: string,
    readonly sessionId: string,
    readonly cwd: string,
    start = Date.UTC(2026, 10, 27, 9, 0, 0),
  ) {
    this.at = start;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(
      path,
      `${JSON.stringify({ type: 'file-history-snapshot', messageId: 'snap', snapshot: { messageId: 'snap', trackedFileBackups: {}, timestamp: new Date(start).toISOString() }, isSnapshotUpdate: false })}\n`,
    );
  }

  private entry(type: 'user' | 'assistant', message: unknown, extra: Record<string, unknown> = {}): void {
    const uuid = `${type[0]}-${++this.n}`;
    this.at += 1_000;
    const line = {
      parentUuid: this.last,
      isSidechain: false,
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: '2.1.240',
      gitBranch: 'main',
      type,
      uuid,
      timestamp: new Date(this.at).toISOString(),
      message,
      ...extra,
    };
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
    this.last = uuid;
  }

  /** A prompt as the user typed it; Claude Code often prepends a `<system-reminder>` of its own. */
  user(text: string, reminder?: string): this {
    this.entry('user', {
      role: 'user',
      content: reminder === undefined ? text : `<system-reminder>\n${reminder}\n</system-reminder>\n${text}`,
    });
    return this;
  }

  /** One assistant message: its text, and tool calls each followed by its result. */
  assistant(text: string, tools: readonly { name: string; input: Record<string, unknown>; result: string }[] = []): this {
    const id = `msg_${++this.n}`;
    const base = {
      id,
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-5',
      stop_reason: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    this.entry('assistant', { ...base, content: [{ type: 'text', text }] }, { requestId: `req_${id}` });
    for (const [i, tool] of tools.entries()) {
      const toolId = `toolu_${id}_${i}`;
      this.entry(
        'assistant',
        { ...base, content: [{ type: 'tool_use', id: toolId, name: tool.name, input: tool.input }] },
        { requestId: `req_${id}` },
      );
      this.entry('user', { role: 'user', content: [{ tool_use_id: toolId, type: 'tool_result', content: tool.result, is_error: false }] });
    }
    appendFileSync(
      this.path,
      `${JSON.stringify({ type: 'progress', uuid: `p-${++this.n}`, parentUuid: this.last, sessionId: this.sessionId, cwd: this.cwd, timestamp: new Date(this.at).toISOString(), data: { type: 'hook_progress', hookEvent: 'Stop' }, isSidechain: false })}\n`,
    );
    return this;
  }

  /** The JSON Claude Code sends a hook of this event on stdin. */
  hookInput(
    event: 'SessionStart' | 'UserPromptSubmit' | 'Stop' | 'PreCompact' | 'SessionEnd',
    extra: Record<string, unknown> = {},
  ): string {
    const specific: Record<string, unknown> =
      event === 'SessionStart'
        ? { source: 'startup', model: 'claude-opus-4-5' }
        : event === 'Stop'
          ? { stop_hook_active: false }
          : event === 'PreCompact'
            ? { trigger: 'auto', custom_instructions: '' }
            : event === 'SessionEnd'
              ? { reason: 'prompt_input_exit' }
              : {};
    return JSON.stringify({
      session_id: this.sessionId,
      transcript_path: this.path,
      cwd: this.cwd,
      permission_mode: 'default',
      hook_event_name: event,
      ...specific,
      ...extra,
    });
  }
}
