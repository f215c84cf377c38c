/**
 * `limbic token create | list | revoke`: the tokens of `serve --http`, kept as hashes beside the
 * memory (SQLite) or in a table of its database (PostgreSQL). `list` and `revoke` also take the
 * OAuth grants (issue 36): what a client approved with `limbic auth code` holds.
 */
import type { Command } from 'commander';
import { createToken, TOKEN_PREFIX } from '../http/tokens.js';
import { DEFAULT_NAMESPACE, namespaceDbPath, tokenFilePath } from '../http/namespaces.js';
import type { Grant } from '../store/oauth-store.js';
import type { TokenRecord, TokenStore } from '../store/token-store.js';

export interface TokenCommandDeps {
  /** The --db file (not a namespace's) or postgres:// URL: the tokens live beside it or in it. */
  readonly dbPath: () => string;
  readonly openTokens: (location: string) => TokenStore;
  readonly fail: (error: unknown) => never;
  /**
   * The namespace the program's global options choose (--namespace, else LIMBIC_NAMESPACE, else
   * "default"): commander gives a flag the program also declares to the program, so
   * `token create --namespace X` arrives there.
   */
  readonly globalNamespace: () => string;
}

export async function withTokens<T>(deps: TokenCommandDeps, work: (tokens: TokenStore) => Promise<T>): Promise<T> {
  const tokens = deps.openTokens(tokenFilePath(deps.dbPath()));
  try {
    return await work(tokens);
  } finally {
    await tokens.close();
  }
}

/** A line of `token list --json`: a bearer token's record, or an OAuth grant's (ids never collide: grants start `g_`). */
export type ListedAccess =
  | (TokenRecord & { readonly kind: 'token' })
  | {
      readonly kind: 'oauth';
      readonly id: string;
      readonly namespace: string;
      readonly readOnly: boolean;
      readonly scope: string;
      readonly clientId: string;
      readonly clientName: string | null;
      readonly resource: string;
      readonly createdAt: number;
      readonly lastUsedAt: number | null;
    };

export function listedGrant(g: Grant): ListedAccess {
  return {
    kind: 'oauth',
    id: g.id,
    namespace: g.namespace,
    readOnly: g.readOnly,
    scope: g.readOnly ? 'memory:read' : 'memory:read memory:write',
    clientId: g.clientId,
    clientName: g.clientName ?? null,
    resource: g.resource,
    createdAt: g.createdAt,
    lastUsedAt: g.lastUsedAt ?? null,
  };
}

/**
 * A client's own words (its name, its metadata URL) for a terminal: control and format characters
 * (escape sequences, bidirectional overrides) shown as "?", so a name cannot rewrite the screen or
 * pass for another line; cut at 80 characters.
 */
export function plainText(text: string): string {
  const shown = text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '?');
  return shown.length > 80 ? `${shown.slice(0, 79)}…` : shown;
}

const when = (ms: number | null | undefined): string => (ms === null || ms === undefined ? 'never used' : new Date(ms).toISOString());

export function registerTokenCommands(program: Command, deps: TokenCommandDeps): void {
  const token = program
    .command('token')
    .description('access tokens for serve --http: each is bound to one namespace, stored only as a hash');
  token
    .command('create')
    .description('make a token and print it once (stdout); only its hash is kept')
    .option('--namespace <name>', 'the memory it opens (default: LIMBIC_NAMESPACE, else "default", the --db file itself)')
    .option('--read-only', 'it may read and search but not change the memory')
    .option('--label <text>', 'a note shown by "token list" (who or what uses it)')
    .action(async (o: { namespace?: string; readOnly?: boolean; label?: string }) => {
      // Without --namespace, the memory every other command opens: what a first token is for.
      const namespace = o.namespace ?? deps.globalNamespace();
      try {
        namespaceDbPath(deps.dbPath(), namespace); // a name this backend cannot hold fails before a token exists
        const made = await withTokens(deps, (tokens) => createToken(tokens, { namespace, readOnly: o.readOnly === true, label: o.label }));
        process.stdout.write(`${made.token}\n`);
        process.stderr.write(
          `limbic: token ${made.record.id} for namespace "${made.record.namespace}"${made.record.namespace === DEFAULT_NAMESPACE ? ' (the --db memory itself)' : ''}${made.record.readOnly ? ' (read-only)' : ''}. ` +
            'This is the only time it is shown: store it now. Send it as "Authorization: Bearer <token>".\n',
        );
      } catch (error) {
        deps.fail(error);
      }
    });
  token
    .command('list')
    .description('the tokens and OAuth grants (ids, namespaces, read-only, labels or clients; never a secret)')
    .option('--json', 'print JSON: one array; each record has kind "token" or "oauth"')
    .action(async (o: { json?: boolean }) => {
      let records: ListedAccess[] = [];
      try {
        records = await withTokens(deps, async (tokens) => [
          ...(await tokens.list()).map((r): ListedAccess => ({ ...r, kind: 'token' })),
          ...(await tokens.oauth.listGrants()).map(listedGrant),
        ]);
      } catch (error) {
        deps.fail(error);
      }
      if (o.json === true) {
        process.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
        return;
      }
      if (records.length === 0)
        process.stderr.write(
          'limbic: no tokens or OAuth grants yet; make a token with "limbic token create" (add --namespace NAME for another memory), or approve an OAuth client with "limbic auth code".\n',
        );
      for (const r of records) {
        const access = `${r.id}  ${r.namespace}  ${r.readOnly ? 'read-only ' : 'read-write'}  ${new Date(r.createdAt).toISOString()}`;
        if (r.kind === 'token') process.stdout.write(`${access}  ${r.label ?? ''}\n`);
        else {
          const client = r.clientName === null ? plainText(r.clientId) : `${plainText(r.clientName)} (${plainText(r.clientId)})`;
          process.stdout.write(`${access}  OAuth client ${client}, last used ${when(r.lastUsedAt)}\n`);
        }
      }
    });
  token
    .command('revoke')
    .description('end a token or an OAuth grant by its id (from "token list"); every running server refuses it from its next request on')
    .argument('<id>', 'the token id, or a grant id (g_…)')
    .action(async (id: string) => {
      // A token pasted here by mistake is never echoed (an error message lands in logs and scrollback).
      if (id.startsWith(TOKEN_PREFIX))
        deps.fail(new Error('That is a token itself, not its id: "limbic token list" shows the ids. Nothing was revoked.'));
      const grant = id.startsWith('g_');
      let removed = false;
      try {
        removed = await withTokens(deps, (tokens) => (grant ? tokens.oauth.revokeGrant(id) : tokens.revoke(id)));
      } catch (error) {
        deps.fail(error);
      }
      // Only an id's shape is echoed: anything else may be a secret pasted by mistake (an approval code).
      const shown = /^(?:g_)?[0-9a-f]{12}$/.test(id) ? ` ${id}` : ' given';
      if (!removed) deps.fail(new Error(`No ${grant ? 'OAuth grant' : 'token'} with the id${shown}. "limbic token list" shows the ids.`));
      process.stderr.write(
        grant
          ? `limbic: revoked OAuth grant ${id}: its access and refresh tokens are refused by every running server from its next request on; the client must be approved again.\n`
          : `limbic: revoked token ${id}. Every running server refuses it from its next request on.\n`,
      );
    });
}
