/**
 * `limbic serve` (the default command): MCP over stdio, as clients start it, or over Streamable
 * HTTP with --http (serve-http.ts). On stdio the SDK's serveStdio speaks both protocol
 * generations: a client that opens with `initialize` gets a 2025-era connection, one that opens
 * with a 2026-07-28 request (server/discover) a modern one; one server instance is built per
 * connection. The stdio loop screens what arrives before the SDK reads it: lines over the size
 * bound and lines that are not JSON-RPC are answered here, not dropped.
 */
import type { Command } from 'commander';
import { ProtocolErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio as serveBothEras } from '@modelcontextprotocol/server/stdio';
import type { Config } from '../../core/config.js';
import { LIMITS } from '../../core/limits.js';
import { createMcpServer } from '../../mcp/server.js';
import { startAutoTune } from '../../service/tuning.js';
import type { App } from '../app.js';
import { fail } from '../output.js';
import { DEFAULT_HTTP_PORT, serveHttp, workerCount } from '../serve-http.js';
import { WholeLines } from '../stdin-lines.js';
import { screenLineBytes } from '../stdin-screen.js';

async function serveStdio(app: App, config: Config, explicitProject: string | undefined): Promise<void> {
  const logger = app.logger;
  // Clients start a stdio server in the project's folder (Claude Code does): its searches prefer that
  // project's memory and never show another's captured sessions (docs/capture.md, "Projects").
  const project = await app.project(process.cwd(), explicitProject);
  const service = app.service(config, undefined, true, project?.key);
  // Off unless LIMBIC_AUTO_TUNE_MINUTES is set (tuning.ts): applies only what "limbic tune --apply" would.
  const autoTune = config.autoTuneMinutes === undefined ? undefined : startAutoTune(service.store, config.autoTuneMinutes, logger);
  // The stored vectors start loading now too (the model did in app.service), before the client's
  // handshake: the first semantic answer after a start waits for both, and neither delays the
  // handshake (the model loads on another core; the vectors are read in chunks).
  service.warm();
  // A call within every limit carries at most LIMITS.maxCallTextBytes of text, which JSON escaping
  // can grow up to 6x (a control character as \u0001), plus field names: 8x leaves room for it.
  // Longer lines are dropped as they stream in and answered with an error; the SDK's transport
  // would otherwise close for good past its buffer (10 MiB by default), ending the process.
  const maxMessageBytes = 8 * LIMITS.maxCallTextBytes;
  // A line that is not a JSON-RPC message is answered here (stdin-screen.ts), not dropped unanswered.
  const screen = (line: Buffer): boolean => {
    const refusal = screenLineBytes(line);
    if (refusal === undefined) return false;
    logger.warn(`answered a line that is not a JSON-RPC message: ${refusal.error.message}`);
    // id null (the specification's answer when no id can be read) is outside the SDK's type, not its transport.
    transport
      .send(refusal as unknown as JSONRPCMessage)
      .catch((error: unknown) => logger.warn('could not answer the malformed message', error));
    return true;
  };
  const lines = new WholeLines(
    maxMessageBytes,
    ({ bytes, id }) => {
      const message = `A message of ${bytes} bytes is over this server's limit of ${maxMessageBytes} bytes and was not read; nothing was changed. Split the call: at most ${LIMITS.maxCallTextBytes} bytes of text per call.`;
      logger.warn(`${message}${id === undefined ? ' It carried no request id to answer.' : ` Answered request ${JSON.stringify(id)}.`}`);
      if (id !== undefined) {
        transport.send({ jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InvalidRequest, message } }).catch((error: unknown) => {
          logger.warn('could not answer the dropped message', error);
        });
      }
    },
    screen,
  );
  process.stdin.pipe(lines);
  const transport = new StdioServerTransport(lines, process.stdout, { maxBufferSize: 2 * maxMessageBytes });
  let closing = false;
  const shutdown = async (code: number): Promise<void> => {
    if (closing) return;
    closing = true;
    autoTune?.stop();
    await handle.close().catch(() => undefined);
    await service.close();
    process.exit(code);
  };
  // The entry owns the transport and builds an instance per connection (and one for a 2026-07-28
  // client's server/discover probe): cheap, over the one service built above.
  // EPIPE on stdout: nobody reads the answers any more, the client is gone (killed, most often),
  // whether or not its end of stdin was closed too.
  let clientGone = false;
  const handle = serveBothEras(({ era }) => createMcpServer(service, app.info, logger, { era, tools: config.tools }), {
    transport,
    onerror: (error) => {
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') clientGone = true;
      else logger.warn('MCP transport error', error);
    },
  });
  // serveStdio set its own close handler on the transport; the process ends with it. stdin's end or
  // EPIPE on stdout is the client leaving (exit 0); any other close is a transport that cannot read again.
  const entryClose = transport.onclose;
  transport.onclose = () => {
    entryClose?.();
    if (closing) return;
    if (process.stdin.readableEnded) return void shutdown(0);
    if (clientGone) {
      logger.info('the client stopped reading stdout (EPIPE): it is gone; stopping');
      return void shutdown(0);
    }
    logger.warn('the MCP transport closed and cannot read again (see the error above); stopping');
    void shutdown(1);
  };
  logger.info(
    `serving MCP on stdio (protocol 2026-07-28 and 2025-era clients)${config.tools === 'all' ? '' : `, ${config.tools} tools only`}; database ${app.redact(config.dbPath)}; ${project === undefined ? 'outside any project' : `project ${project.key}`}`,
  );
  process.stdin.on('close', () => void shutdown(0));
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
}

/** commander's view of serve's own flags. */
interface ServeFlags {
  http?: boolean;
  host: string;
  port: string;
  allowedHost?: string[];
  publicUrl?: string;
  oauthClientHost?: string[];
  workers?: string;
  project?: string;
}

export function registerServeCommand(program: Command, app: App): void {
  program
    .command('serve', { isDefault: true })
    .description('serve MCP over stdio (what MCP clients start; the default command), or over HTTP with --http')
    .option('--http', 'serve MCP over Streamable HTTP at /mcp, and the web page at /, behind tokens (see "limbic token")')
    .option('--host <address>', 'with --http: address to listen on; anything but loopback needs a token first', '127.0.0.1')
    .option('--port <n>', 'with --http: port (0 picks a free one)', String(DEFAULT_HTTP_PORT))
    .option(
      '--allowed-host <name>',
      'with --http: another host name clients may use (Host/Origin check), repeatable',
      (v: string, p: string[] = []) => [...p, v],
    )
    .option(
      '--public-url <url>',
      'with --http: the origin clients reach it by through a tunnel or reverse proxy, as https://memory.example.com: the OAuth issuer (env LIMBIC_PUBLIC_URL)',
    )
    .option(
      '--oauth-client-host <name>',
      'with --http: a host whose OAuth client metadata documents may be on a loopback or private address, repeatable (env LIMBIC_OAUTH_CLIENT_HOSTS, comma-separated)',
      (v: string, p: string[] = []) => [...p, v],
    )
    .option(
      '--workers <n>',
      "with --http: processes accepting on the port, sharing the memory and the request bounds (env LIMBIC_HTTP_WORKERS; default 1: one process; try the machine's cores where it has more than 2)",
    )
    .option('--project <key>', 'on stdio: the project whose memory searches prefer (env LIMBIC_PROJECT; default: found from the folder)')
    .action(async (o: ServeFlags) => {
      if (o.http !== true) return serveStdio(app, app.config(), o.project);
      if (app.namespaceFlagGiven()) fail(new Error('With --http each token picks its namespace: drop --namespace.'));
      const root = app.rootConfig();
      return serveHttp(
        {
          host: o.host,
          port: Number(o.port),
          allowedHosts: o.allowedHost ?? [],
          limits: app.httpLimits(),
          ...app.oauthSettings({ publicUrl: o.publicUrl, clientHosts: o.oauthClientHost }),
          workers: workerCount(o.workers ?? app.httpWorkers()),
        },
        {
          dbPath: root.dbPath,
          openStore: (location, namespace) => app.openStore(location, namespace, root),
          openTokens: (location) => app.openTokens(location),
          embedder: (threads) => app.embedder(root, threads, true),
          info: app.info,
          logger: app.logger,
          // Off unless LIMBIC_AUTO_TUNE_MINUTES is set, as on stdio: each namespace tunes on its own log.
          autoTuneMinutes: root.autoTuneMinutes,
          heavySlots: { slots: root.heavyToolSlots, waitMs: root.heavyToolWaitMs },
          inverseRelations: root.inverseRelations,
          tools: root.tools,
          redactor: app.redactor(root),
        },
      );
    });
}
