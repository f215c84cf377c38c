/**
 * The two protocol generations a Limbic client may speak, for tests that run over both
 * (`describe.each(ERAS)`): 2025-era clients open with `initialize` (as every client did before
 * 2026-07-28, the MCP Inspector and the official memory server's SDK included); 2026-07-28 clients
 * ask `server/discover` and send each request with its own `_meta` envelope, no handshake.
 */
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';

export type Era = 'legacy' | 'modern';

/** Both generations, named for test titles. */
export const ERAS: readonly { readonly era: Era; readonly name: string }[] = [
  { era: 'legacy', name: '2025-era client (initialize)' },
  { era: 'modern', name: '2026-07-28 client (server/discover)' },
];

/** The 2026-07-28 revision, pinned: a modern client never falls back to initialize, so a test cannot pass on the wrong era. */
export const MODERN_REVISION = '2026-07-28';

/** A v2 client that speaks `era`: the 2025 handshake, or 2026-07-28 only. */
export function eraClient(era: Era, name = 'limbic-test'): Client {
  return new Client({ name, version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_REVISION } } } : {});
}

/** Connects `client` over `transport` and checks it got the era it asked for. */
export async function connectIn(era: Era, client: Client, transport: Transport): Promise<Client> {
  await client.connect(transport);
  const got = client.getProtocolEra();
  if (got !== era) throw new Error(`asked for a ${era} connection, got ${String(got)}`);
  return client;
}

/** A client of `era` over Streamable HTTP at `url` (…/mcp), with a bearer token, or over an in-process fetch. */
export async function httpClient(
  era: Era,
  url: string,
  options: { readonly token?: string; readonly fetch?: (request: Request) => Promise<Response> } = {},
): Promise<Client> {
  const fetchVia = options.fetch;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: options.token === undefined ? {} : { headers: { Authorization: `Bearer ${options.token}` } },
    ...(fetchVia === undefined ? {} : { fetch: (input: string | URL, init?: RequestInit) => fetchVia(new Request(input, init)) }),
  });
  return connectIn(era, eraClient(era), transport);
}

/** A client of `era` over stdio, starting `server`. */
export async function stdioClient(era: Era, server: StdioServerParameters): Promise<Client> {
  return connectIn(era, eraClient(era), new StdioClientTransport(server));
}
