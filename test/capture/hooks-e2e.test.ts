/**
 * Issue 34's check, end to end: a fresh HOME, a git repository, `limbic --db D hooks install
 * claude-code`; the hooks it wrote, run as Claude Code runs them (its shell, its environment, the
 * JSON it sends, a transcript in its format) capture a decision made in the session exactly once,
 * store no system reminder and no planted secret in any byte, and give the next session in that
 * repository a brief (≤ 10,000 characters) naming the decision, and a session in another
 * repository a brief that does not.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaudeTranscript } from '../helpers/claude-transcript.js';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { runWithInput, workersDone, type HookRun } from '../helpers/hook-process.js';

const exec = promisify(execFile);

/** Secrets as they reach a transcript: in tool output the user never typed. */
const SECRETS = {
  githubToken: 'ghp_R8xYq2LmZp4Vt7Wc9Nb3Kd6Fh1Js5Ga0Qe2U',
  databasePassword: 'Sup3r-S3cret-Passw0rd',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
};
const DECISION = 'We decided: invoices are numbered per tenant, gap-free, and the numbering lives in PostgreSQL sequences.';

interface Hooks {
  readonly [event: string]: string;
}

/** Runs one installed hook command as Claude Code does: `sh -c`, in the session's folder, the client's environment, the event's JSON on stdin. */
function runCommand(command: string, cwd: string, env: NodeJS.ProcessEnv, input: string): Promise<HookRun> {
  return runWithInput(spawn('sh', ['-c', command], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] }), input);
}

/** Every file under a folder, as bytes. */
function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((p) => statSync(p).isFile())
    .map((path) => ({ path, bytes: readFileSync(path) }));
}

function gitRepo(dir: string, remote: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', remote]);
}

describe('issue 34: a fresh HOME, a git repository, limbic hooks install claude-code', () => {
  let tmp: ReturnType<typeof tempDir>;
  let home: string;
  let dataDir: string;
  let db: string;
  let shop: string;
  let blog: string;
  let env: NodeJS.ProcessEnv;
  let hooks: Hooks;

  beforeAll(async () => {
    tmp = tempDir('limbic-hooks-e2e-');
    home = join(tmp.dir, 'home');
    mkdirSync(home);
    dataDir = join(tmp.dir, 'data');
    mkdirSync(dataDir);
    db = join(dataDir, 'memory.db');
    shop = join(tmp.dir, 'src', 'shop');
    blog = join(tmp.dir, 'src', 'blog');
    gitRepo(shop, 'git@github.com:acme/shop.git');
    gitRepo(blog, 'https://github.com/acme/blog.git');
    // What Claude Code passes its hooks: its own environment, not the shell's.
    env = { PATH: '/usr/bin:/bin', HOME: home };
    await exec(process.execPath, [CLI, '--db', db, 'hooks', 'install', 'claude-code'], {
      env: { PATH: process.env.PATH ?? '', HOME: home },
    });
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { type: string; command: string }[] }[]>;
    };
    hooks = Object.fromEntries(Object.entries(settings.hooks).map(([event, groups]) => [event, groups[0]?.hooks[0]?.command ?? '']));
  });
  afterAll(() => tmp.cleanup());

  it('wrote one command hook per event', () => {
    expect(Object.keys(hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop', 'PreCompact', 'SessionEnd']);
    for (const command of Object.values(hooks))
      expect(command).toMatch(new RegExp(`^${process.execPath} \\S+/dist/cli/hook\\.js --db ${db} `));
  });

  it('captures the session once, without system reminders or secrets; briefs the next session in the repository, not in another', async () => {
    const id = '7c1d2e3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5';
    const t = new ClaudeTranscript(join(home, '.claude', 'projects', shop.replace(/[/.]/g, '-'), `${id}.jsonl`), id, shop);
    const run = async (
      event: 'SessionStart' | 'UserPromptSubmit' | 'Stop' | 'PreCompact' | 'SessionEnd',
      extra: Record<string, unknown> = {},
    ) => {
      const result = await runCommand(hooks[event] ?? '', shop, env, t.hookInput(event, extra));
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      return result;
    };

    expect((await run('SessionStart')).stdout).toBe(''); // nothing known yet
    const prompt = 'How should invoice numbers work across tenants?';
    t.user(prompt, 'The user opened src/billing/invoice.ts. Make sure to run the linter before finishing.');
    await run('UserPromptSubmit', { prompt });
    t.assistant('Let me check the schema and the config.', [
      {
        name: 'Bash',
        input: { command: 'cat .env' },
        result: `GITHUB_TOKEN=${SECRETS.githubToken}\nDATABASE_URL=postgres://billing:${SECRETS.databasePassword}@db.internal:5432/billing`,
      },
      { name: 'Read', input: { file_path: `${shop}/deploy/aws.yml` }, result: `aws_secret_access_key: ${SECRETS.awsSecret}` },
    ]);
    await run('Stop');
    t.user(DECISION, 'Todo list: 1. numbering 2. migration');
    await run('UserPromptSubmit', { prompt: DECISION });
    t.assistant('Agreed: one PostgreSQL sequence per tenant, gap-free numbering.');
    await run('Stop', { last_assistant_message: 'Agreed: one PostgreSQL sequence per tenant, gap-free numbering.' });
    await run('Stop', { stop_hook_active: true });
    await run('SessionEnd');
    await workersDone(join(home, '.cache', 'limbic', 'hooks'));

    const sqlite = new Database(db, { readonly: true });
    const stored = sqlite.prepare('SELECT o.content AS content FROM observations o').all() as { content: string }[];
    sqlite.close();
    expect(stored.filter((o) => o.content.includes('invoices are numbered per tenant'))).toHaveLength(1);
    expect(stored.filter((o) => o.content.includes('How should invoice numbers work'))).toHaveLength(1);
    expect(stored.some((o) => /system-reminder|run the linter before finishing|Todo list/.test(o.content))).toBe(false);

    // The next session in this repository starts with a brief naming the decision.
    const next = new ClaudeTranscript(
      join(home, '.claude', 'projects', 'next', 'next-session.jsonl'),
      '0d1e2f3a-0000-4000-8000-000000000001',
      shop,
    );
    const start = await runCommand(hooks.SessionStart ?? '', shop, env, next.hookInput('SessionStart'));
    expect(start).toMatchObject({ code: 0, stderr: '' });
    const brief = (JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } })
      .hookSpecificOutput;
    expect(brief.hookEventName).toBe('SessionStart');
    expect(brief.additionalContext.length).toBeLessThanOrEqual(10_000);
    expect(brief.additionalContext).toMatch(/^<limbic-memory-brief/);
    expect(brief.additionalContext).toContain('invoices are numbered per tenant');

    // A session in another repository gets nothing of it.
    const other = new ClaudeTranscript(
      join(home, '.claude', 'projects', 'blog', 'blog-session.jsonl'),
      '0d1e2f3a-0000-4000-8000-000000000002',
      blog,
    );
    const elsewhere = await runCommand(hooks.SessionStart ?? '', blog, env, other.hookInput('SessionStart'));
    expect(elsewhere).toMatchObject({ code: 0, stderr: '' });
    expect(elsewhere.stdout).not.toMatch(/invoices are numbered|per tenant/);

    // No planted secret in any byte Limbic keeps: the database and everything beside it, and the hooks' own files.
    for (const file of [...filesUnder(dataDir), ...filesUnder(join(home, '.cache', 'limbic'))]) {
      for (const [name, secret] of Object.entries(SECRETS)) {
        expect(file.bytes.includes(Buffer.from(secret)), `${name} in ${file.path}`).toBe(false);
      }
    }
  });
});
