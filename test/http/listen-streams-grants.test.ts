/**
 * Issue 36: an OAuth client's subscriptions/listen streams are held by its grant's id (`g_…`), which
 * `tokens.list()` (bearer tokens) does not know. The periodic check must count live grants too: a
 * live grant's stream stays open, and a grant revoked by another process (`limbic token revoke
 * g_…`) has its streams closed. A real token file, real HTTP responses held open.
 */
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { noopLogger } from '../../src/core/logger.js';
import {
  ACCESS_TOKEN_PREFIX,
  AUTHORIZATION_CODE_PREFIX,
  REFRESH_TOKEN_PREFIX,
  hashSecret,
  newId,
  newSecret,
} from '../../src/http/oauth/secrets.js';
import { ListenStreams } from '../../src/http/listen-streams.js';
import { openSqliteTokenStore } from '../../src/store/sqlite/sqlite-tokens.js';
import type { TokenStore } from '../../src/store/token-store.js';
import { tempDir } from '../helpers/fixtures.js';

const NOW = Date.now();
const HOUR = 3_600_000;
let done: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const d of done.reverse()) await d();
  done = [];
});

/** A grant with tokens issued, as /token leaves it. */
async function liveGrant(tokens: TokenStore): Promise<string> {
  const id = newId('g_');
  const clientId = newId('c_');
  const codeHash = hashSecret(newSecret(AUTHORIZATION_CODE_PREFIX));
  const resource = 'http://127.0.0.1/mcp';
  await tokens.oauth.addGrantWithCode(
    { id, clientId, clientName: 'Listener', namespace: 'default', readOnly: true, resource, createdAt: NOW, lastUsedAt: undefined },
    codeHash,
    {
      grantId: id,
      clientId,
      redirectUri: 'http://127.0.0.1/cb',
      codeChallenge: 'x',
      resource,
      scope: 'memory:read',
      expiresAt: NOW + HOUR,
    },
  );
  expect(await tokens.oauth.exchangeCode(codeHash, NOW)).toMatchObject({ ok: true });
  const issued = await tokens.oauth.issueTokens(id, {
    accessHash: hashSecret(newSecret(ACCESS_TOKEN_PREFIX)),
    accessExpiresAt: NOW + HOUR,
    refreshHash: hashSecret(newSecret(REFRESH_TOKEN_PREFIX)),
    refreshExpiresAt: NOW + 24 * HOUR,
    scope: 'memory:read',
  });
  expect(issued).toBe(true);
  return id;
}

describe('listen streams of OAuth grants', () => {
  it("a live grant's stream stays open across checks; once the grant is revoked elsewhere, the next check closes it", async () => {
    const { dir, cleanup } = tempDir('limbic-streams-');
    done.push(cleanup);
    const path = join(dir, 'memory.tokens.db');
    const tokens = openSqliteTokenStore(path);
    const cli = openSqliteTokenStore(path);
    done.push(() => tokens.close());
    done.push(() => cli.close());
    const grantId = await liveGrant(tokens);
    const otherGrant = await liveGrant(tokens);

    const streams = new ListenStreams({ maxPerToken: 4, recheckMs: 3_600_000, tokens, logger: noopLogger });
    done.push(() => streams.stop());
    const server: Server = createServer((req, res) => {
      const holder = req.url === '/other' ? otherGrant : grantId;
      expect(streams.open(holder, res)).toBeUndefined();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    done.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    done.push(() => server.closeAllConnections());
    const { port } = server.address() as AddressInfo;
    const listen = (path: string) =>
      new Promise<{ closed: Promise<void> }>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path }, (res: IncomingMessage) => {
          const closed = new Promise<void>((r) => res.once('close', () => r()));
          res.once('data', () => resolve({ closed }));
        }).once('error', reject);
      });
    const stream = await listen('/');
    const other = await listen('/other');
    expect(streams.count(grantId)).toBe(1);

    await streams.recheck();
    expect(streams.count(grantId)).toBe(1);
    expect(streams.count(otherGrant)).toBe(1);

    expect(await cli.oauth.revokeGrant(grantId)).toBe(true);
    await streams.recheck();
    await stream.closed;
    expect(streams.count(grantId)).toBe(0);
    expect(streams.count(otherGrant)).toBe(1);
    const stillOpen = await Promise.race([other.closed.then(() => 'closed'), Promise.resolve('open')]);
    expect(stillOpen).toBe('open');
  });
});
