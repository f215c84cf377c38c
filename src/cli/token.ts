/**
 * `limbic token create | list | revoke`: the tokens of `serve --http`, kept as hashes beside the
 * memory (SQLite) or in a table of its database (PostgreSQL).
 */
import type { Command } from 'commander';
import { createToken } from '../http/tokens.js';
import { DEFAULT_NAMESPACE, namespaceDbPath, tokenFilePath } from '../http/namespaces.js';
import type { TokenStore } from '../store/token-store.js';

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

async function withTokens<T>(deps: TokenCommandDeps, work: (tokens: TokenStore) => Promise<T>): Promise<T> {
  const tokens = deps.openTokens(tokenFilePath(deps.dbPath()));
  try {
    return await work(tokens);
  } finally {
    await tokens.close();
  }
}

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
    .description('the tokens (ids, namespaces, read-only, labels; never the tokens themselves)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      let records: Awaited<ReturnType<TokenStore['list']>> = [];
      try {
        records = await withTokens(deps, (tokens) => tokens.list());
      } catch (error) {
        deps.fail(error);
      }
      if (o.json === true) {
        process.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
        return;
      }
      if (records.length === 0)
        process.stderr.write('limbic: no tokens yet; make one with "limbic token create" (add --namespace NAME for another memory).\n');
      for (const r of records) {
        process.stdout.write(
          `${r.id}  ${r.namespace}  ${r.readOnly ? 'read-only ' : 'read-write'}  ${new Date(r.createdAt).toISOString()}  ${r.label ?? ''}\n`,
        );
      }
    });
  token
    .command('revoke')
    .description('remove a token by its id (from "token list"); every running server refuses it from its next request on')
    .argument('<id>', 'the token id')
    .action(async (id: string) => {
      let removed = false;
      try {
        removed = await withTokens(deps, (tokens) => tokens.revoke(id));
      } catch (error) {
        deps.fail(error);
      }
      if (!removed) deps.fail(new Error(`No token with id ${id}. "limbic token list" shows the ids.`));
      process.stderr.write(`limbic: revoked token ${id}. Every running server refuses it from its next request on.\n`);
    });
}
