/**
 * POST /register: RFC 7591 dynamic client registration, for clients without a client metadata
 * document (Claude.ai's connectors still register this way). Open to anyone who can reach the
 * server, so bounded: a number of registrations per address per hour and of clients in all. A
 * registration grants nothing by itself: every grant still needs a code at the consent page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { OAuthStore } from '../../store/oauth-store.js';
import { BodyTooLarge, readBody, sendJson } from '../guard.js';
import { redirectUriProblem } from './redirects.js';
import { MAX_FORM_BYTES, remoteAddressOf, sendOAuthError } from './requests.js';
import { hashSecret, newId, newSecret } from './secrets.js';

export interface RegisterDeps {
  readonly store: () => OAuthStore;
  readonly clock: () => number;
  /** Registrations one address may make per hour. @default 20 */
  readonly perAddressPerHour?: number;
  /** Registered clients in all. @default 10_000 */
  readonly maxClients?: number;
}

const HOUR_MS = 60 * 60 * 1000;
const CLIENT_SECRET_PREFIX = 'limbic_cs_';

const RegistrationSchema = z.looseObject({
  redirect_uris: z.array(z.string().max(2048)).min(1).max(20),
  client_name: z.string().max(200).optional(),
  client_uri: z.string().max(2048).optional(),
  token_endpoint_auth_method: z.enum(['none', 'client_secret_post', 'client_secret_basic']).optional(),
  grant_types: z.array(z.string().max(100)).max(10).optional(),
  response_types: z.array(z.string().max(100)).max(10).optional(),
  scope: z.string().max(1000).optional(),
});

export class RegisterEndpoint {
  /** Registrations of this process run one at a time, so the per-address bound is not raced past here. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly d: RegisterDeps) {}

  async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      req.resume();
      sendOAuthError(res, 400, 'invalid_client_metadata', 'the registration must be a JSON body (Content-Type: application/json)');
      return;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, MAX_FORM_BYTES);
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error;
      req.resume();
      sendOAuthError(res, 413, 'invalid_client_metadata', error.message, { connection: 'close' });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      sendOAuthError(res, 400, 'invalid_client_metadata', 'the body is not JSON');
      return;
    }
    const parsed = RegistrationSchema.safeParse(body);
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
      sendOAuthError(res, 400, 'invalid_client_metadata', why);
      return;
    }
    const meta = parsed.data;
    for (const uri of meta.redirect_uris) {
      const problem = redirectUriProblem(uri);
      if (problem !== undefined) {
        sendOAuthError(res, 400, 'invalid_redirect_uri', problem);
        return;
      }
    }
    if (meta.grant_types !== undefined && meta.grant_types.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      sendOAuthError(res, 400, 'invalid_client_metadata', 'grant_types may hold only authorization_code and refresh_token');
      return;
    }
    if (meta.response_types !== undefined && meta.response_types.some((r) => r !== 'code')) {
      sendOAuthError(res, 400, 'invalid_client_metadata', 'response_types may hold only "code"');
      return;
    }
    if (meta.client_uri !== undefined && !/^https?:\/\//i.test(meta.client_uri)) {
      sendOAuthError(res, 400, 'invalid_client_metadata', 'client_uri must be an http(s) URL');
      return;
    }
    // A name shows on the consent page (escaped) and in `limbic token list`: no control characters.
    const clientName =
      meta.client_name
        // eslint-disable-next-line no-control-regex
        ?.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
        .replace(/ {2,}/g, ' ')
        .trim() || undefined;
    const registeredBy = hashSecret(remoteAddressOf(req));
    const run = this.chain.then(() => this.store(res, { ...meta, client_name: clientName }, registeredBy));
    this.chain = run.catch(() => undefined);
    await run;
  }

  private async store(res: ServerResponse, meta: z.infer<typeof RegistrationSchema>, registeredBy: string): Promise<void> {
    const store = this.d.store();
    const now = this.d.clock();
    const perAddress = this.d.perAddressPerHour ?? 20;
    const maxClients = this.d.maxClients ?? 10_000;
    if ((await store.clientsRegisteredSince(registeredBy, now - HOUR_MS)) >= perAddress) {
      sendOAuthError(
        res,
        429,
        'invalid_client_metadata',
        `this address registered ${perAddress} clients in the last hour, its limit: try again later, or use a client metadata document (an https client_id)`,
        { 'retry-after': '600' },
      );
      return;
    }
    if ((await store.clientCount()) >= maxClients) {
      sendOAuthError(
        res,
        400,
        'invalid_client_metadata',
        `this server holds ${maxClients} registered clients, its limit: use a client metadata document (an https client_id), or ask its owner`,
      );
      return;
    }
    // RFC 7591 §2: without a method, client_secret_basic.
    const method = meta.token_endpoint_auth_method ?? 'client_secret_basic';
    const secret = method === 'none' ? undefined : newSecret(CLIENT_SECRET_PREFIX);
    const clientId = newId('c_');
    await store.addClient({
      clientId,
      clientName: meta.client_name,
      clientUri: meta.client_uri,
      redirectUris: meta.redirect_uris,
      tokenEndpointAuthMethod: method,
      secretHash: secret === undefined ? undefined : hashSecret(secret),
      registeredBy,
      createdAt: now,
    });
    sendJson(
      res,
      201,
      {
        client_id: clientId,
        client_id_issued_at: Math.floor(now / 1000),
        ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
        redirect_uris: meta.redirect_uris,
        ...(meta.client_name === undefined ? {} : { client_name: meta.client_name }),
        ...(meta.client_uri === undefined ? {} : { client_uri: meta.client_uri }),
        token_endpoint_auth_method: method,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      { pragma: 'no-cache' },
    );
  }
}
