/**
 * `limbic auth code` and the OAuth grants in `limbic token list | revoke` (issue 36), as a user runs
 * them: the built CLI (dist/) as a child process, on a real SQLite token file. The grants are made
 * through the store itself, as the consent page would.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenFilePath } from '../../src/http/namespaces.js';
import { hashSecret, newSecret } from '../../src/http/oauth/secrets.js';
import { openPgTokenStore } from '../../src/store/postgres/pg-tokens.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import type { TokenStore } from '../../src/store/token-store.js';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { skipNote, startPgServer, type PgServer } from '../helpers/pg-server.js';
import { oauthTokens, register } from '../http/oauth-helpers.js';

const CODE = /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;

const limbic = (db: string, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, '--db', db, '--no-model', ...args], {
    encoding: 'utf8',
    env: { ...process.env, LIMBIC_NAMESPACE: '' },
  });

describe('limbic auth code', () => {
  let dir: string;
  let cleanup: () => void;
  let db: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('limbic-auth-code-'));
    db = join(dir, 'memory.db');
  });
  afterEach(() => cleanup());

  /** Every byte of the token file and its journal. */
  const tokenFileBytes = (): Buffer =>
    Buffer.concat(
      ['memory.tokens.db', 'memory.tokens.db-wal', 'memory.tokens.db-journal']
        .map((f) => join(dir, f))
        .filter((f) => existsSync(f))
        .map((f) => readFileSync(f)),
    );

  it('prints the code alone on stdout, says what it is for on stderr, and stores only its hash', async () => {
    const before = Date.now();
    const run = limbic(db, 'auth', 'code', '--namespace', 'team');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^[^\n]+\n$/);
    const code = run.stdout.trim();
    expect(code).toMatch(CODE);
    expect(run.stderr).toContain('namespace "team"');
    expect(run.stderr).toContain('memory:read memory:write');
    expect(run.stderr).toMatch(/10 minutes/);
    expect(run.stderr).toMatch(/consent page/);
    expect(run.stderr).not.toContain(code);

    // Not one byte of the file holds the code, in any spelling a person could type back.
    const bytes = tokenFileBytes();
    expect(bytes.length).toBeGreaterThan(0);
    for (const spelling of [code, code.replaceAll('-', ''), code.toLowerCase()]) {
      expect(bytes.includes(Buffer.from(spelling, 'utf8'))).toBe(false);
      expect(bytes.includes(Buffer.from(spelling, 'utf16le'))).toBe(false);
    }
    // The stored row is its hash: the store takes the code back by it, once.
    const tokens = openSqliteTokenStore(join(dir, 'memory.tokens.db'));
    try {
      const taken = await tokens.oauth.consumeApprovalCode(hashSecret(code), Date.now());
      expect(taken).toMatchObject({ namespace: 'team', readOnly: false });
      expect(taken!.createdAt).toBeGreaterThanOrEqual(before);
      expect(taken!.expiresAt - taken!.createdAt).toBe(10 * 60_000);
      expect(await tokens.oauth.consumeApprovalCode(hashSecret(code), Date.now())).toBeUndefined();
    } finally {
      await tokens.close();
    }
  });

  it('--read-only carries the read scope only; without --namespace the memory the other commands open', async () => {
    const run = limbic(db, 'auth', 'code', '--read-only');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain('namespace "default" (the --db memory itself)');
    expect(run.stderr).toMatch(/read-only \(scope memory:read\)/);
    const tokens = openSqliteTokenStore(join(dir, 'memory.tokens.db'));
    try {
      expect(await tokens.oauth.consumeApprovalCode(hashSecret(run.stdout.trim()), Date.now())).toMatchObject({
        namespace: 'default',
        readOnly: true,
      });
    } finally {
      await tokens.close();
    }
  });

  it('--ttl takes 1 minute to 24 hours in s, m or h, and refuses anything else before a code exists', async () => {
    const twoHours = limbic(db, 'auth', 'code', '--ttl', '2h');
    expect(twoHours.status, twoHours.stderr).toBe(0);
    expect(twoHours.stderr).toMatch(/valid for 2 hours/);
    const tokens = openSqliteTokenStore(join(dir, 'memory.tokens.db'));
    try {
      const taken = await tokens.oauth.consumeApprovalCode(hashSecret(twoHours.stdout.trim()), Date.now());
      expect(taken!.expiresAt - taken!.createdAt).toBe(2 * 3_600_000);
    } finally {
      await tokens.close();
    }
    expect(limbic(db, 'auth', 'code', '--ttl', '90s').status).toBe(0);
    expect(limbic(db, 'auth', 'code', '--ttl', '24h').status).toBe(0);
    for (const [ttl, message] of [
      ['30s', /from 1 minute \(1m\) to 24 hours \(24h\)/],
      ['25h', /from 1 minute \(1m\) to 24 hours \(24h\)/],
      ['0m', /from 1 minute/],
      ['10', /not a duration.*s, m or h/],
      ['ten minutes', /not a duration/],
      ['-5m', /not a duration/],
    ] as const) {
      const refused = limbic(db, 'auth', 'code', '--ttl', ttl);
      expect(refused.status, ttl).toBe(1);
      expect(refused.stdout, ttl).toBe('');
      expect(refused.stderr, ttl).toMatch(message);
    }
  });

  it('a running serve --http admits a client with the code, once; token list shows its grant and revoke shuts it out', async () => {
    const child = spawn(process.execPath, [CLI, '--db', db, '--no-model', 'serve', '--http', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LIMBIC_NAMESPACE: '', LIMBIC_PUBLIC_URL: '' },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1], { timeout: 20_000 }).toBeDefined();
      const url = /at (http:\/\/[^ ]+)\/mcp/.exec(stderr)![1]!;
      const code = limbic(db, 'auth', 'code', '--namespace', 'team', '--read-only').stdout.trim();
      const client = await register(url, { client_name: 'CLI test client' });
      const clientId = String(client.body.client_id);
      const tokens = await oauthTokens(url, clientId, code);
      expect(tokens.scope).toBe('memory:read');
      // Single use: the same code admits nobody else.
      await expect(oauthTokens(url, clientId, code)).rejects.toThrow();

      const grants = (JSON.parse(limbic(db, 'token', 'list', '--json').stdout) as Record<string, unknown>[]).filter(
        (r) => r.kind === 'oauth',
      );
      expect(grants).toEqual([expect.objectContaining({ namespace: 'team', readOnly: true, clientId, clientName: 'CLI test client' })]);
      const mcp = () =>
        fetch(`${url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tokens.access_token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        });
      expect((await mcp()).status).not.toBe(401);
      expect(limbic(db, 'token', 'revoke', String(grants[0]!.id)).status).toBe(0);
      expect((await mcp()).status).toBe(401);
      expect(stderr).not.toContain(code);
      expect(stderr).not.toContain(tokens.access_token);
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('refuses a namespace name the backend cannot hold, printing no code', () => {
    const bad = limbic(db, 'auth', 'code', '--namespace', '../etc');
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/not a namespace name/);
  });
});

/** The OAuth grants in `token list | revoke`, on the backend whose memory `location()` gives. */
function grantTests(location: () => string): void {
  let db: string;
  beforeEach(() => {
    db = location();
  });

  /** A grant with issued tokens, made through the store as the consent page and /token would. */
  async function addGrant(id: string, clientName: string | undefined, readOnly: boolean): Promise<void> {
    const tokens = openTokens(db);
    const now = Date.now();
    const clientId = 'https://client.example/oauth/metadata.json';
    const resource = 'http://127.0.0.1:7411/mcp';
    const scope = readOnly ? 'memory:read' : 'memory:read memory:write';
    try {
      await tokens.oauth.addGrantWithCode(
        { id, clientId, clientName, namespace: 'team', readOnly, resource, createdAt: now, lastUsedAt: undefined },
        hashSecret(newSecret('limbic_ac_')),
        {
          grantId: id,
          clientId,
          redirectUri: 'https://client.example/callback',
          codeChallenge: 'x'.repeat(43),
          resource,
          scope,
          expiresAt: now + 120_000,
        },
      );
      const issued = await tokens.oauth.issueTokens(id, {
        accessHash: hashSecret(newSecret('limbic_at_')),
        accessExpiresAt: now + 3_600_000,
        refreshHash: hashSecret(newSecret('limbic_rt_')),
        refreshExpiresAt: now + 30 * 86_400_000,
        scope,
      });
      expect(issued).toBe(true);
    } finally {
      await tokens.close();
    }
  }

  it('list shows grants beside tokens, --json as one array with kind; revoke ends a grant by its g_ id', async () => {
    const made = limbic(db, 'token', 'create', '--namespace', 'work', '--label', 'laptop');
    expect(made.status, made.stderr).toBe(0);
    await addGrant('g_0123456789ab', 'Claude', false);
    await addGrant('g_ba9876543210', undefined, true);

    const json = limbic(db, 'token', 'list', '--json');
    expect(json.status, json.stderr).toBe(0);
    const records = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(records).toHaveLength(3);
    expect(records).toContainEqual(expect.objectContaining({ kind: 'token', namespace: 'work', readOnly: false, label: 'laptop' }));
    expect(records).toContainEqual(
      expect.objectContaining({
        kind: 'oauth',
        id: 'g_0123456789ab',
        namespace: 'team',
        readOnly: false,
        scope: 'memory:read memory:write',
        clientId: 'https://client.example/oauth/metadata.json',
        clientName: 'Claude',
        lastUsedAt: null,
      }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ kind: 'oauth', id: 'g_ba9876543210', readOnly: true, scope: 'memory:read', clientName: null }),
    );
    expect(json.stdout).not.toContain(made.stdout.trim());

    const text = limbic(db, 'token', 'list');
    expect(text.stdout).toMatch(
      /^g_0123456789ab {2}team {2}read-write {2}\S+ {2}OAuth client Claude \(https:\/\/client\.example\/oauth\/metadata\.json\), last used never used$/m,
    );
    expect(text.stdout).toMatch(
      /^g_ba9876543210 {2}team {2}read-only {3}\S+ {2}OAuth client https:\/\/client\.example\/oauth\/metadata\.json, /m,
    );
    expect(text.stdout).toMatch(/^[0-9a-f]{12} {2}work {2}read-write {2}\S+ {2}laptop$/m);

    const revoked = limbic(db, 'token', 'revoke', 'g_0123456789ab');
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stderr).toMatch(/revoked OAuth grant g_0123456789ab/);
    const after = JSON.parse(limbic(db, 'token', 'list', '--json').stdout) as { id: string }[];
    expect(after.map((r) => r.id)).not.toContain('g_0123456789ab');
    expect(after).toHaveLength(2);

    const again = limbic(db, 'token', 'revoke', 'g_0123456789ab');
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/No OAuth grant with the id g_0123456789ab/);
  });

  it("a client's name cannot write escape sequences to the terminal", async () => {
    await addGrant('g_0123456789ab', 'Claude\u001b[2J\u001b]0;owned\u0007\u202Eevil\nnext line', false);
    const text = limbic(db, 'token', 'list');
    expect(text.status, text.stderr).toBe(0);
    expect([...text.stdout].filter((c) => c !== '\n' && /[\p{Cc}\p{Cf}]/u.test(c))).toEqual([]);
    expect(text.stdout.trim().split('\n')).toHaveLength(1);
    expect(text.stdout).toContain('Claude?[2J?]0;owned??evil?next line');
  });

  it('revoke never echoes a token or an approval code given by mistake', () => {
    const token = limbic(db, 'token', 'create').stdout.trim();
    const asToken = limbic(db, 'token', 'revoke', token);
    expect(asToken.status).toBe(1);
    expect(asToken.stderr).toMatch(/a token itself, not its id.*Nothing was revoked/);
    expect(asToken.stderr).not.toContain(token);
    const code = limbic(db, 'auth', 'code').stdout.trim();
    const asCode = limbic(db, 'token', 'revoke', code);
    expect(asCode.status).toBe(1);
    expect(asCode.stderr).toMatch(/No token with the id given/);
    expect(asCode.stderr).not.toContain(code);
    expect(JSON.parse(limbic(db, 'token', 'list', '--json').stdout)).toHaveLength(1);
  });
}

/** The tokens beside a memory, as the CLI opens them. */
const openTokens = (db: string): TokenStore =>
  db.startsWith('postgres') ? openPgTokenStore(tokenFilePath(db)) : openSqliteTokenStore(tokenFilePath(db));

describe('limbic token list and revoke with OAuth grants', () => {
  let cleanup: () => void = () => undefined;
  let dir = '';
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('limbic-grants-'));
  });
  afterEach(() => cleanup());
  grantTests(() => join(dir, 'memory.db'));
});

const started = await startPgServer();
const pgServer: PgServer | undefined = 'url' in started ? started : undefined;
afterAll(async () => {
  await pgServer?.stop();
});

describe.runIf(pgServer !== undefined)(`limbic auth code and OAuth grants on PostgreSQL${skipNote(started)}`, () => {
  let url = '';
  beforeEach(async () => {
    url = await (pgServer as PgServer).createDatabase();
  });
  afterEach(async () => {
    await pgServer?.dropDatabase(url);
  });

  it('stores the approval code as a hash in the database, taken once', async () => {
    const run = limbic(url, 'auth', 'code', '--namespace', 'team', '--read-only', '--ttl', '5m');
    expect(run.status, run.stderr).toBe(0);
    const code = run.stdout.trim();
    expect(code).toMatch(CODE);
    const tokens = openTokens(url);
    try {
      const taken = await tokens.oauth.consumeApprovalCode(hashSecret(code), Date.now());
      expect(taken).toMatchObject({ namespace: 'team', readOnly: true });
      expect(taken!.expiresAt - taken!.createdAt).toBe(5 * 60_000);
      expect(await tokens.oauth.consumeApprovalCode(hashSecret(code), Date.now())).toBeUndefined();
    } finally {
      await tokens.close();
    }
  });

  grantTests(() => url);
});
