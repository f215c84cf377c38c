/**
 * The bounds of `serve --http` on requests in flight, and the variables that set them. Apart from
 * serve-http.ts so the composition root (app.ts) reads them without loading the HTTP server: every
 * command, and every lifecycle hook, loads app.ts.
 */
import { MemoryError, ERROR_CODES } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import type { HttpLimits } from '../http/http-server.js';

/**
 * maxBodyBytes: a call within every limit carries at most LIMITS.maxCallTextBytes of text, which
 * JSON escaping can grow up to 6x; 8x leaves room for field names (the same bound stdio uses).
 *
 * There are no sessions to bound (issue 28): every request is served on its own and forgotten.
 *
 * Requests in flight: the server answers on one thread, so more than a few calls at once does not
 * make answers come sooner; it only holds more answers in memory, each until its client has read
 * it. 400 concurrent whole-graph reads (4.3 MiB answers, 3,000 entities) by clients slower than the
 * server took the server from 133 to 2,831 MB with no bound; with 16 at once in all, 8 per
 * namespace and 4 per token, to 592 MB for one token's flood (332 refused with 429) and 1,332 MB
 * for eight tokens' (npm run bench:http-flood -- --full --slow-clients). 64 waiting per token lets
 * 50 clients sharing one token (npm run bench:http) queue instead of failing; a request still
 * waiting after 30 s is refused.
 *
 * subscriptions/listen streams (issue 35): 1,024 per namespace (the SDK's own bound), 16 per token,
 * so no token can take a namespace's places (one read-only token took all 1,024 and its owner could
 * listen no more): a client needs one stream, and 16 leaves room for a few clients sharing a token
 * and for reconnects while a dropped stream is noticed. The tokens of open streams are checked
 * against the store every 5 s (one list query, only while streams are open) and before every
 * change is announced, so a token revoked by another process stops hearing at once.
 */
export const DEFAULT_LIMITS: HttpLimits = {
  maxBodyBytes: 8 * LIMITS.maxCallTextBytes,
  maxAnswerBytes: 16 * 1024 * 1024,
  maxInFlight: 16,
  maxInFlightPerNamespace: 8,
  maxInFlightPerToken: 4,
  maxQueuedPerToken: 64,
  queueWaitMs: 30_000,
  drainMs: 30_000,
  maxHeavyInFlight: 4,
  maxHeavyInFlightPerToken: 1,
  maxStreamsPerNamespace: 1_024,
  maxStreamsPerToken: 16,
  streamRecheckMs: 5_000,
};

/** The bounds a user may set, each from an environment variable (docs/http.md). */
export const LIMIT_SETTINGS: Readonly<Partial<Record<keyof HttpLimits, string>>> = {
  maxInFlight: 'LIMBIC_HTTP_MAX_IN_FLIGHT',
  maxInFlightPerNamespace: 'LIMBIC_HTTP_MAX_IN_FLIGHT_PER_NAMESPACE',
  maxInFlightPerToken: 'LIMBIC_HTTP_MAX_IN_FLIGHT_PER_TOKEN',
  maxQueuedPerToken: 'LIMBIC_HTTP_MAX_QUEUED_PER_TOKEN',
  queueWaitMs: 'LIMBIC_HTTP_QUEUE_WAIT_MS',
  maxHeavyInFlight: 'LIMBIC_HTTP_MAX_HEAVY_IN_FLIGHT',
  maxHeavyInFlightPerToken: 'LIMBIC_HTTP_MAX_HEAVY_IN_FLIGHT_PER_TOKEN',
  maxStreamsPerNamespace: 'LIMBIC_HTTP_MAX_STREAMS_PER_NAMESPACE',
  maxStreamsPerToken: 'LIMBIC_HTTP_MAX_STREAMS_PER_TOKEN',
  streamRecheckMs: 'LIMBIC_HTTP_STREAM_RECHECK_MS',
};

/**
 * The bounds set in the environment (unset or empty: the default); app.ts passes process.env.
 * @example httpLimitsFromEnv({ LIMBIC_HTTP_MAX_IN_FLIGHT_PER_TOKEN: '4' }) // { maxInFlightPerToken: 4 }
 */
export function httpLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): Partial<HttpLimits> {
  const set: Partial<Record<keyof HttpLimits, number>> = {};
  for (const [key, name] of Object.entries(LIMIT_SETTINGS) as [keyof HttpLimits, string][]) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) {
      throw new MemoryError(
        ERROR_CODES.CONFIG_INVALID,
        `${name}=${raw} is not a whole number of at least 1; unset it for the default (${DEFAULT_LIMITS[key]}).`,
      );
    }
    set[key] = n;
  }
  return set;
}
