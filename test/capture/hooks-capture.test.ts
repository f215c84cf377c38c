/**
 * Capture through the hooks as Claude Code (and the clients without a transcript Limbic reads) run
 * them (issue 34): the built dist/cli/hook.js, the JSON each client sends, a transcript in Claude
 * Code's own format growing between events. A decision made in the session is stored once however
 * many Stops fire, no system reminder is stored, a prompt seen by its hook and in the transcript is
 * stored once, the background capture (the default) stores the same as --foreground.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaudeTranscript } from '../helpers/claude-transcript.js';
import { tempDir } from '../helpers/fixtures.js';
import { runHook, workersDone } from '../helpers/hook-process.js';

const SESSION = '3f2a9c1e-8b7d-4e21-9a55-0c1d2e3f4a5b';
const DECISION = 'We decided: the ledger stays on PostgreSQL 16, and we drop the MySQL replica by March.';

interface Row {
  readonly name: string;
  readonly type: string;
  readonly content: string;
  readonly kind: string;
}

/** Every observation of the memory, with its entity. */
function observations(db: string): Row[] {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite
      .prepare(
        'SELECT e.name AS name, e.entity_type AS type, o.content AS content, o.kind AS kind FROM observations o JOIN entities e ON e.id = o.entity_id ORDER BY o.id',
      )
      .all() as Row[];
  } finally {
    sqlite.close();
  }
}

describe('capture through the hooks', () => {
  let tmp: ReturnType<typeof tempDir>;
  let env: Record<string, string>;
  let db: string;
  let state: string;
  let repo: string;
  beforeEach(() => {
    tmp = tempDir('limbic-hook-capture-');
    repo = join(tmp.dir, 'shop');
    db = join(tmp.dir, 'memory.db');
    state = join(tmp.dir, 'state');
    env = { HOME: join(tmp.dir, 'home'), XDG_CACHE_HOME: join(tmp.dir, 'cache') };
  });
  afterEach(() => tmp.cleanup());

  const hook = (event: string, input: string, ...more: string[]) =>
    runHook(['--db', db, event, '--client', 'claude-code', '--state-dir', state, ...more], input, env);

  it('Claude Code: a decision made in the session is stored once across repeated Stops; no system reminder is', async () => {
    const t = new ClaudeTranscript(join(tmp.dir, 'projects', '-shop', `${SESSION}.jsonl`), SESSION, repo);
    t.user('Which database should the ledger use?', 'The user opened docs/ledger.md. Todo list is empty.');
    t.assistant('Postgres already runs the orders; the replica is MySQL.', [
      { name: 'Bash', input: { command: 'grep -n image docker-compose.yml' }, result: 'docker-compose.yml:4:    image: postgres:16' },
    ]);
    t.user(DECISION, 'Remember: tests must pass before commit.');
    t.assistant('Noted: PostgreSQL 16 for the ledger, MySQL replica gone by March.');

    for (const run of [await hook('stop', t.hookInput('Stop'), '--foreground'), await hook('stop', t.hookInput('Stop'), '--foreground')]) {
      expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    let rows = observations(db);
    expect(rows.filter((r) => r.content.includes('PostgreSQL 16, and we drop the MySQL replica'))).toHaveLength(1);
    expect(rows.some((r) => /system-reminder|Todo list is empty|tests must pass before commit/.test(r.content))).toBe(false);
    const session = rows.find((r) => r.type === 'session')?.name;
    expect(session).toBe('Claude Code session 2026-11-27 3f2a9c1e');
    expect(rows.filter((r) => r.name === session).map((r) => r.kind)).toEqual(
      expect.arrayContaining(['prompt', 'reply', 'tool', 'decision']),
    );

    // The session goes on: the next Stop stores only what is new.
    t.user('And the read replicas?');
    t.assistant('Two streaming replicas of the same PostgreSQL 16 primary.');
    expect((await hook('stop', t.hookInput('Stop'), '--foreground')).code).toBe(0);
    rows = observations(db);
    expect(rows.filter((r) => r.content.includes('PostgreSQL 16, and we drop the MySQL replica'))).toHaveLength(1);
    expect(rows.filter((r) => r.content.includes('streaming replicas'))).toHaveLength(1);
    const again = rows.length;
    expect((await hook('session-end', t.hookInput('SessionEnd'), '--foreground')).code).toBe(0);
    expect(observations(db)).toHaveLength(again);
  });

  it('a prompt seen by UserPromptSubmit and then in the transcript is stored once; PreCompact captures too', async () => {
    const t = new ClaudeTranscript(join(tmp.dir, 'projects', '-shop', `${SESSION}.jsonl`), SESSION, repo);
    t.user('Rename the cache key prefix to shop:v2 everywhere.');
    expect(
      (
        await hook(
          'prompt',
          t.hookInput('UserPromptSubmit', { prompt: 'Rename the cache key prefix to shop:v2 everywhere.' }),
          '--foreground',
        )
      ).code,
    ).toBe(0);
    t.assistant('Renamed in 3 files.', [{ name: 'Edit', input: { file_path: `${repo}/src/cache.ts` }, result: 'Applied 1 edit' }]);
    expect((await hook('pre-compact', t.hookInput('PreCompact'), '--foreground')).code).toBe(0);
    expect((await hook('stop', t.hookInput('Stop', { last_assistant_message: 'Renamed in 3 files.' }), '--foreground')).code).toBe(0);
    const rows = observations(db);
    expect(rows.filter((r) => r.content.includes('shop:v2 everywhere'))).toHaveLength(1);
    expect(rows.filter((r) => r.content.includes('Renamed in 3 files'))).toHaveLength(1);
  });

  it('in the background (the default), repeated events store the same, once', async () => {
    const t = new ClaudeTranscript(join(tmp.dir, 'projects', '-shop', `${SESSION}.jsonl`), SESSION, repo);
    t.user(DECISION).assistant('Noted.');
    const runs = await Promise.all([
      hook('stop', t.hookInput('Stop')),
      hook('stop', t.hookInput('Stop')),
      hook('session-end', t.hookInput('SessionEnd')),
    ]);
    for (const run of runs) expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    await workersDone(state);
    expect(observations(db).filter((r) => r.content.includes('drop the MySQL replica'))).toHaveLength(1);
    expect(existsSync(join(state, 'hooks.log')) ? readFileSync(join(state, 'hooks.log'), 'utf8') : '').toBe('');
  });

  it('SessionStart prints the project’s brief in the shape each client injects, and nothing of it elsewhere', async () => {
    const t = new ClaudeTranscript(join(tmp.dir, 'projects', '-shop', `${SESSION}.jsonl`), SESSION, repo);
    t.user(DECISION).assistant('Noted.');
    expect((await hook('stop', t.hookInput('Stop'), '--foreground')).code).toBe(0);
    const start = (client: string, cwd: string) =>
      runHook(
        ['--db', db, 'session-start', '--client', client, '--state-dir', state],
        JSON.stringify({ session_id: 'next', cwd, hook_event_name: 'SessionStart', source: 'startup' }),
        env,
      );
    for (const client of ['claude-code', 'codex', 'gemini']) {
      const run = await start(client, repo);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const out = JSON.parse(run.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
      expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
      expect(out.hookSpecificOutput.additionalContext).toMatch(
        /^<limbic-memory-brief[\s\S]*drop the MySQL replica[\s\S]*<\/limbic-memory-brief>$/,
      );
    }
    const cursor = JSON.parse((await start('cursor', repo)).stdout) as { additional_context: string };
    expect(cursor.additional_context).toContain('drop the MySQL replica');
    // The same memory, from a folder of no project the session ran in: its turns stay out.
    const elsewhere = join(tmp.dir, 'elsewhere');
    mkdirSync(elsewhere);
    expect((await start('claude-code', elsewhere)).stdout).not.toContain('drop the MySQL replica');
    expect(
      (
        await runHook(['--db', db, 'session-start', '--state-dir', state], JSON.stringify({ cwd: repo, hook_event_name: 'SessionStart' }), {
          ...env,
          LIMBIC_BRIEF: '0',
        })
      ).stdout,
    ).toBe('');
  });

  it('a client without a transcript Limbic reads: the prompt and reply fields, each stored once, in one session', async () => {
    const codex = (event: string, input: Record<string, unknown>) =>
      runHook(
        ['--db', db, event, '--client', 'codex', '--state-dir', state, '--foreground'],
        JSON.stringify({
          session_id: 'codex-77',
          turn_id: 't1',
          cwd: repo,
          model: 'gpt-5',
          permission_mode: 'default',
          transcript_path: null,
          ...input,
        }),
        env,
      );
    expect((await codex('prompt', { hook_event_name: 'UserPromptSubmit', prompt: 'Should retries be per tenant?' })).code).toBe(0);
    for (let i = 0; i < 2; i++)
      expect(
        (await codex('stop', { hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'Yes: per tenant, capped at 3.' }))
          .code,
      ).toBe(0);
    const rows = observations(db).filter((r) => r.type === 'session');
    expect(new Set(rows.map((r) => r.name)).size).toBe(1);
    expect(rows[0]?.name).toMatch(/^Codex session \d{4}-\d\d-\d\d codex77$/);
    expect(rows.filter((r) => r.content === 'user: Should retries be per tenant?')).toHaveLength(1);
    expect(rows.filter((r) => r.content === 'assistant: Yes: per tenant, capped at 3.')).toHaveLength(1);
  });
});

describe('a busy database', () => {
  let tmp: ReturnType<typeof tempDir>;
  afterEach(() => tmp.cleanup());

  it('a capture waits a short while for another writer, then gives up with one line and leaves its turns to the next event', async () => {
    tmp = tempDir('limbic-hook-busy-');
    const db = join(tmp.dir, 'memory.db');
    const state = join(tmp.dir, 'state');
    const env = { HOME: join(tmp.dir, 'home'), XDG_CACHE_HOME: join(tmp.dir, 'cache') };
    const t = new ClaudeTranscript(join(tmp.dir, 'projects', `${SESSION}.jsonl`), SESSION, join(tmp.dir, 'shop'));
    t.user('First question, before the lock.').assistant('First answer.');
    const stop = () =>
      runHook(['--db', db, 'stop', '--client', 'claude-code', '--state-dir', state, '--foreground'], t.hookInput('Stop'), env);
    expect((await stop()).stderr).toBe('');

    t.user(DECISION).assistant('Noted.');
    const holder = new Database(db);
    holder.pragma('busy_timeout = 0');
    holder.exec('BEGIN IMMEDIATE'); // another process writing, for longer than a hook waits
    try {
      const busy = await stop();
      expect(busy.code).toBe(0);
      expect(busy.stdout).toBe('');
      expect(busy.stderr.trim().split('\n')).toHaveLength(1);
      expect(busy.stderr).toMatch(/^limbic hook: stop claude-code: .*(locked|busy)/i);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(observations(db).filter((r) => r.content.includes('drop the MySQL replica'))).toHaveLength(0);
    expect((await stop()).stderr).toBe('');
    expect(observations(db).filter((r) => r.content.includes('drop the MySQL replica'))).toHaveLength(1);
  });
});
