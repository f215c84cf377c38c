/**
 * Each client's hook input made one shape (issue 34): the JSON Claude Code, Codex, Gemini CLI,
 * VS Code and Cursor send, as their documentation shows it; unknown fields ignored, fields of the
 * wrong type absent, the event from the command line or from the input.
 */
import { describe, expect, it } from 'vitest';
import { HOOK_EVENTS, hookEventOf, readHookInput } from '../../src/capture/hook-input.js';
import { parseHookArgs, workerArgs } from '../../src/cli/hook-args.js';

describe('readHookInput', () => {
  it('reads Claude Code’s snake_case input, ignoring fields it does not know', () => {
    const input = readHookInput(
      {
        session_id: '3f2a9c1e-0000-4000-8000-000000000001',
        transcript_path: '/home/u/.claude/projects/-src-shop/3f2a9c1e-0000-4000-8000-000000000001.jsonl',
        cwd: '/src/shop',
        permission_mode: 'default',
        hook_event_name: 'Stop',
        stop_hook_active: false,
        last_assistant_message: 'Decided: we keep PostgreSQL.',
        background_tasks: [],
        future_field: { anything: true },
      },
      { client: 'claude-code' },
    );
    expect(input).toEqual({
      event: 'stop',
      client: 'claude-code',
      sessionId: '3f2a9c1e-0000-4000-8000-000000000001',
      transcriptPath: '/home/u/.claude/projects/-src-shop/3f2a9c1e-0000-4000-8000-000000000001.jsonl',
      cwd: '/src/shop',
      prompt: undefined,
      reply: 'Decided: we keep PostgreSQL.',
      why: undefined,
    });
  });

  it('tells VS Code (camelCase beside transcript_path) and Cursor (conversation_id, workspace_roots) from Claude Code in Claude Code’s entries', () => {
    const vscode = readHookInput(
      {
        timestamp: '2026-02-09T10:30:00.000Z',
        cwd: '/src/shop',
        sessionId: 'vs-1',
        hookEventName: 'UserPromptSubmit',
        transcript_path: '/t.json',
        prompt: 'hi',
      },
      { client: 'claude-code' },
    );
    expect(vscode).toMatchObject({ event: 'prompt', client: 'vscode', sessionId: 'vs-1', transcriptPath: '/t.json', prompt: 'hi' });
    const cursor = readHookInput(
      {
        conversation_id: 'c-1',
        generation_id: 'g-1',
        hook_event_name: 'afterAgentResponse',
        workspace_roots: ['/src/shop', '/src/lib'],
        cursor_version: '2.0.77',
        text: 'Done: the cache is per tenant.',
      },
      { client: 'claude-code' },
    );
    expect(cursor).toMatchObject({
      event: 'reply',
      client: 'cursor',
      sessionId: 'c-1',
      cwd: '/src/shop',
      reply: 'Done: the cache is per tenant.',
    });
  });

  it('reads Gemini CLI’s AfterAgent (prompt and prompt_response) and Codex’s Stop', () => {
    expect(
      readHookInput(
        {
          session_id: 'g',
          transcript_path: '/g.json',
          cwd: '/w',
          hook_event_name: 'AfterAgent',
          timestamp: 'x',
          prompt: 'why?',
          prompt_response: 'Because.',
          stop_hook_active: false,
        },
        { client: 'gemini' },
      ),
    ).toMatchObject({ event: 'stop', client: 'gemini', prompt: 'why?', reply: 'Because.' });
    expect(
      readHookInput(
        {
          session_id: 'x',
          turn_id: 't',
          transcript_path: null,
          cwd: '/w',
          hook_event_name: 'Stop',
          model: 'gpt-5',
          permission_mode: 'default',
          stop_hook_active: false,
          last_assistant_message: null,
        },
        { client: 'codex' },
      ),
    ).toMatchObject({ event: 'stop', client: 'codex', transcriptPath: undefined, reply: undefined });
  });

  it('takes the event from the command line first, else from the input; none at all is undefined', () => {
    expect(readHookInput({ hook_event_name: 'Stop' }, { event: 'session-end', client: 'claude-code' })?.event).toBe('session-end');
    expect(readHookInput({ hook_event_name: 'PreCompress', trigger: 'auto' }, { client: 'gemini' })).toMatchObject({
      event: 'pre-compact',
      why: 'auto',
    });
    expect(readHookInput({ hook_event_name: 'Notification' }, { client: 'claude-code' })).toBeUndefined();
    expect(readHookInput('not an object', { client: 'claude-code' })).toBeUndefined();
    expect(readHookInput(null, { event: 'stop', client: 'claude-code' })).toMatchObject({ event: 'stop', sessionId: undefined });
  });

  it('counts a field of the wrong type as absent', () => {
    const input = readHookInput(
      { session_id: 42, cwd: ['/x'], prompt: { text: 'hi' }, workspace_roots: [7] },
      { event: 'prompt', client: 'codex' },
    );
    expect(input).toMatchObject({ sessionId: undefined, cwd: undefined, prompt: undefined });
  });

  it('maps every client’s event names onto Limbic’s', () => {
    expect(HOOK_EVENTS.map((e) => hookEventOf(e))).toEqual([...HOOK_EVENTS]);
    expect(['SessionStart', 'sessionStart'].map(hookEventOf)).toEqual(['session-start', 'session-start']);
    expect(['UserPromptSubmit', 'BeforeAgent', 'beforeSubmitPrompt'].map(hookEventOf)).toEqual(['prompt', 'prompt', 'prompt']);
    expect(['Stop', 'AfterAgent', 'stop'].map(hookEventOf)).toEqual(['stop', 'stop', 'stop']);
    expect(['PreCompact', 'PreCompress', 'precompact'].map(hookEventOf)).toEqual(['pre-compact', 'pre-compact', 'pre-compact']);
    expect(hookEventOf('PostToolUse')).toBeUndefined();
  });
});

describe('parseHookArgs', () => {
  it('reads what the installed hooks carry, and `limbic [global] hook EVENT` too', () => {
    expect(parseHookArgs(['--db', '/m.db', '--namespace', 'work', 'stop', '--client', 'gemini', '--state-dir', '/s'])).toEqual({
      global: { db: '/m.db', namespace: 'work' },
      event: 'stop',
      client: 'gemini',
      stateDir: '/s',
      mode: 'detach',
      ignored: [],
    });
    expect(parseHookArgs(['--db=/m.db', 'hook', 'SessionStart', '--foreground'])).toMatchObject({
      global: { db: '/m.db' },
      event: 'session-start',
      client: 'claude-code',
      mode: 'foreground',
    });
  });

  it('never throws: unknown words are kept aside, an unknown client falls back to claude-code', () => {
    const args = parseHookArgs(['-x', 'stop', 'extra', '--client', 'emacs', '--db']);
    expect(args).toMatchObject({ event: 'stop', client: 'claude-code' });
    expect(args.ignored).toEqual(['-x', '--client emacs', '--db', 'extra']);
    expect(parseHookArgs([]).event).toBeUndefined();
  });

  it('reads any other global option the way commander sets it, so a newer setting reaches App', () => {
    expect(parseHookArgs(['--no-redact', '--redact-pii', '--project-key=github.com/acme/shop', 'stop']).global).toEqual({
      redact: false,
      redactPii: true,
      projectKey: 'github.com/acme/shop',
    });
  });

  it('the background worker gets the same command line with --worker', () => {
    expect(workerArgs(['--db', '/m.db', 'stop', '--foreground'])).toEqual(['--db', '/m.db', 'stop', '--worker']);
    expect(parseHookArgs(workerArgs(['stop'])).mode).toBe('worker');
  });
});
