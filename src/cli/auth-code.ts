/**
 * `limbic auth code`: a one-time approval code for the consent page of `serve --http`'s OAuth
 * server (issue 36, docs/oauth.md). The code alone goes to stdout, so a script can take it; what it
 * is for goes to stderr. Only its hash is stored, beside the bearer tokens: a copied token file or a
 * backup holds no code anyone could type.
 */
import type { Command } from 'commander';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { DEFAULT_NAMESPACE, namespaceDbPath, parseNamespace } from '../http/namespaces.js';
import { hashSecret, newApprovalCode } from '../http/oauth/secrets.js';
import type { TokenCommandDeps } from './token.js';
import { withTokens } from './token.js';

export const DEFAULT_APPROVAL_TTL_MS = 10 * 60_000;
/** Long enough to walk to another machine and finish a connector's set-up; short enough not to linger. */
export const MIN_APPROVAL_TTL_MS = 60_000;
export const MAX_APPROVAL_TTL_MS = 24 * 60 * 60_000;

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 60 * 60_000 };

/**
 * A lifetime as typed: a whole number and a unit, s, m or h; between 1 minute and 24 hours.
 * @example parseTtl('10m') // 600000
 */
export function parseTtl(text: string): number {
  const match = /^(\d{1,6})([smh])$/.exec(text.trim().toLowerCase());
  const ms = match === null ? undefined : Number(match[1]) * UNIT_MS[match[2]!]!;
  if (ms === undefined) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--ttl ${JSON.stringify(text)} is not a duration: give a whole number and a unit, s, m or h (for example 90s, 10m, 2h).`,
    );
  }
  if (ms < MIN_APPROVAL_TTL_MS || ms > MAX_APPROVAL_TTL_MS) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `--ttl ${text.trim()} is out of bounds: an approval code lives from 1 minute (1m) to 24 hours (24h); the default is 10m.`,
    );
  }
  return ms;
}

/** "10 minutes", "2 hours", "90 seconds": how long, for the note on stderr. */
function spoken(ms: number): string {
  const [n, unit] = ms % 3_600_000 === 0 ? [ms / 3_600_000, 'hour'] : ms % 60_000 === 0 ? [ms / 60_000, 'minute'] : [ms / 1000, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

export function registerAuthCommands(program: Command, deps: TokenCommandDeps): void {
  const auth = program
    .command('auth')
    .description('approving OAuth clients of serve --http (Claude.ai, ChatGPT, VS Code…): see docs/oauth.md');
  auth
    .command('code')
    .description('print a one-time approval code (stdout) to type into the consent page an OAuth client opens; only its hash is kept')
    .option('--namespace <name>', 'the memory the client gets (default: LIMBIC_NAMESPACE, else "default", the --db file itself)')
    .option('--read-only', 'the client may read and search but not change the memory (scope memory:read)')
    .option('--ttl <duration>', 'how long the code may be used: 1m to 24h, as 90s, 10m or 2h', '10m')
    .action(async (o: { namespace?: string; readOnly?: boolean; ttl: string }) => {
      try {
        const ttlMs = parseTtl(o.ttl);
        const namespace = parseNamespace(o.namespace ?? deps.globalNamespace());
        namespaceDbPath(deps.dbPath(), namespace); // a name this backend cannot hold fails before a code exists
        const readOnly = o.readOnly === true;
        const code = newApprovalCode();
        const createdAt = Date.now();
        const expiresAt = createdAt + ttlMs;
        await withTokens(deps, (tokens) => tokens.oauth.addApprovalCode(hashSecret(code), { namespace, readOnly, createdAt, expiresAt }));
        process.stdout.write(`${code}\n`);
        process.stderr.write(
          `limbic: a one-time approval code for namespace "${namespace}"${namespace === DEFAULT_NAMESPACE ? ' (the --db memory itself)' : ''}, ` +
            `${readOnly ? 'read-only (scope memory:read)' : 'read and write (scopes memory:read memory:write)'}, ` +
            `valid for ${spoken(ttlMs)} (until ${new Date(expiresAt).toISOString()}) and for one client. ` +
            'Type it into the consent page your MCP client opens (Limbic\'s "Allow" page) after checking the client and the host it will return to. ' +
            'Only its hash is kept; "limbic token list" then shows the client\'s grant, "limbic token revoke ID" ends it.\n',
        );
      } catch (error) {
        deps.fail(error);
      }
    });
}
