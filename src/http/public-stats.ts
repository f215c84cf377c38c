/**
 * What a token may learn of where the server keeps things (issue 26): `get_statistics` over HTTP
 * and the page's `/api/stats` name the database file, never its folder, and no other text in them
 * (a model that could not load says where it looked) carries an absolute path. Any token may read
 * statistics, read-only ones included; stdio, the user's own process, still shows full paths.
 */
import { basename } from 'node:path';
import type { MemoryService } from '../service/memory-service.js';

/** A database location as a token may see it: a file's name, or "PostgreSQL" (no folder, host or user). */
export function publicName(location: string): string {
  return /^postgres(ql)?:\/\//i.test(location) ? 'PostgreSQL' : basename(location);
}

/** An absolute path (POSIX, Windows drive or UNC) with at least one folder, up to a space or quote. */
const ABSOLUTE_PATH = /(?<![\w.~/\\])(?:[A-Za-z]:[\\/]|\\\\|\/)(?:[^\s"'`<>|\\/]+[\\/])+([^\s"'`<>|\\/]*)/g;

/**
 * A text with each absolute path cut to its last part.
 * @example scrubPaths('No model is installed in /home/ann/.cache/limbic/models.') // 'No model is installed in models.'
 */
export const scrubPaths = (text: string): string => text.replace(ABSOLUTE_PATH, (_, last: string) => last);

const scrubbed = (value: unknown): unknown => {
  if (typeof value === 'string') return scrubPaths(value);
  if (Array.isArray(value)) return value.map(scrubbed);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubbed(v)]));
  return value;
};

type Statistics = Awaited<ReturnType<MemoryService['statistics']>>;

/** Statistics as any token may see them. */
export function publicStatistics(stats: Statistics): Statistics {
  const shown = scrubbed(stats) as Statistics;
  return { ...shown, database: { ...shown.database, path: publicName(stats.database.path) } };
}

/** The service as a session over HTTP sees it: the same, but its statistics show no paths. */
export function withPublicStatistics(service: MemoryService): MemoryService {
  return new Proxy(service, {
    get(target, property, receiver) {
      if (property === 'statistics') return async () => publicStatistics(await target.statistics());
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
