/**
 * Who is asking (issue 36): the OAuth client behind a `client_id`. An https URL is a client ID
 * metadata document (CIMD), fetched and checked by client-metadata.ts; anything else is looked up
 * among the clients registered by RFC 7591 dynamic registration. /authorize and /token call this
 * before trusting any other parameter; an unknown client is shown an error page, never redirected.
 */
import type { OAuthStore } from '../../store/oauth-store.js';
import { ClientMetadataFetcher } from './client-metadata.js';

/** A client as the endpoints use it, whichever way it made itself known. */
export interface ResolvedClient {
  /** The id exactly as presented: a registered id (`c_…`) or the document's URL. */
  readonly clientId: string;
  /** As the client gave it, control characters removed; shown escaped on pages. */
  readonly clientName: string | undefined;
  readonly redirectUris: readonly string[];
  /** 'none', 'client_secret_post' or 'client_secret_basic' ('none' for every metadata document). */
  readonly tokenEndpointAuthMethod: string;
  /** SHA-256 of the client secret, for the two client_secret methods. */
  readonly secretHash: string | undefined;
  readonly kind: 'registered' | 'metadata-document';
}

export type ClientResolution = { readonly ok: true; readonly client: ResolvedClient } | { readonly ok: false; readonly error: string };

export interface ResolveClientDeps {
  readonly store: OAuthStore;
  /** Host names whose metadata documents may live on loopback or private addresses (--oauth-client-host). */
  readonly clientHosts: readonly string[];
  /**
   * The fetcher of metadata documents, with its cache. By default one per store and allow-list, kept
   * as long as the store lives, so a server gets one cache for its life without passing it around.
   */
  readonly metadata?: ClientMetadataFetcher;
}

const fetchers = new WeakMap<OAuthStore, Map<string, ClientMetadataFetcher>>();

/** The fetcher this store and allow-list share (created on first use). */
function defaultFetcher(store: OAuthStore, clientHosts: readonly string[]): ClientMetadataFetcher {
  let byHosts = fetchers.get(store);
  if (byHosts === undefined) fetchers.set(store, (byHosts = new Map()));
  const key = JSON.stringify(clientHosts);
  let fetcher = byHosts.get(key);
  if (fetcher === undefined) byHosts.set(key, (fetcher = new ClientMetadataFetcher({ clientHosts })));
  return fetcher;
}

/** Longest client_id looked at; a registered id is 14 characters, a document URL a few dozen. */
const MAX_CLIENT_ID_LENGTH = 2000;

/** A client_id quoted in a message: bounded, so a huge one does not fill the page. */
export const quotedClientId = (clientId: string): string => JSON.stringify(clientId.length > 120 ? `${clientId.slice(0, 120)}…` : clientId);

/** Whether a client_id names a metadata document rather than a registered client. */
export const isMetadataDocumentId = (clientId: string): boolean => clientId.startsWith('https://') || clientId.startsWith('http://');

/**
 * The client `clientId` names, or why there is none as plain text for the error page (what is
 * wrong and what to do). Never throws for a bad id; a store failure does throw.
 *
 * @example await resolveClient('c_1a2b3c4d5e6f', { store: tokens.oauth, clientHosts: [] })
 */
export async function resolveClient(clientId: string, deps: ResolveClientDeps): Promise<ClientResolution> {
  if (clientId.length === 0) {
    return { ok: false, error: 'The request names no client (client_id is missing). Start the connection again from your MCP client.' };
  }
  if (clientId.length > MAX_CLIENT_ID_LENGTH) {
    return { ok: false, error: `The client_id is ${clientId.length} characters long; at most ${MAX_CLIENT_ID_LENGTH} are accepted.` };
  }
  if (isMetadataDocumentId(clientId)) {
    const fetched = await (deps.metadata ?? defaultFetcher(deps.store, deps.clientHosts)).fetch(clientId);
    if (!fetched.ok) return fetched;
    const { document } = fetched;
    return {
      ok: true,
      client: {
        clientId: document.clientId,
        clientName: document.clientName,
        redirectUris: document.redirectUris,
        tokenEndpointAuthMethod: 'none',
        secretHash: undefined,
        kind: 'metadata-document',
      },
    };
  }
  const registered = await deps.store.client(clientId);
  if (registered === undefined) {
    return {
      ok: false,
      error: `No client with the id ${quotedClientId(clientId)} is registered with this server. It may have registered with another server, or its registration was removed: remove the connector in your MCP client and add it again, so that it registers anew.`,
    };
  }
  return {
    ok: true,
    client: {
      clientId: registered.clientId,
      clientName: registered.clientName,
      redirectUris: registered.redirectUris,
      tokenEndpointAuthMethod: registered.tokenEndpointAuthMethod,
      secretHash: registered.secretHash,
      kind: 'registered',
    },
  };
}
