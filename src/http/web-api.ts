/**
 * The page's side of the server: its static files (the page and the graph library, read from disk,
 * nothing fetched from elsewhere) and three JSON reads behind the same tokens as MCP — search,
 * one entity with its neighbourhood, statistics. Reads only: the page never changes a memory.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toNfc } from '../core/text/fold.js';
import { toHybridOptions, HybridSearchInputSchema } from '../mcp/hybrid-options.js';
import type { MemoryService } from '../service/memory-service.js';
import type { TokenRecord } from '../store/token-store.js';
import { sendJson } from './guard.js';
import { publicStatistics } from './public-stats.js';

/** The page's files: web/ at the package root (beside src/ and dist/). */
const WEB_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');

const STATIC: Readonly<Record<string, { file: () => string; type: string }>> = {
  '/': { file: () => join(WEB_ROOT, 'index.html'), type: 'text/html; charset=utf-8' },
  '/app.js': { file: () => join(WEB_ROOT, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/why.js': { file: () => join(WEB_ROOT, 'why.js'), type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: () => join(WEB_ROOT, 'app.css'), type: 'text/css; charset=utf-8' },
  // Served from node_modules by path: the library is bundled with Limbic, never fetched from a CDN.
  '/vendor/cytoscape.min.js': {
    file: () => createRequire(import.meta.url).resolve('cytoscape/dist/cytoscape.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
};

const cache = new Map<string, Buffer>();

/** Serves a static file of the page; false when `path` is not one. */
export function serveStatic(path: string, res: ServerResponse): boolean {
  const entry = STATIC[path === '/index.html' ? '/' : path];
  if (entry === undefined) return false;
  let body = cache.get(path);
  if (body === undefined) {
    body = readFileSync(entry.file());
    cache.set(path, body);
  }
  res.writeHead(200, {
    'content-type': entry.type,
    'cache-control': 'no-cache',
    // The page loads only its own files and talks only to this server.
    'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
  return true;
}

/** How many neighbours the entity view draws; a hub's full neighbourhood would be unreadable. */
const MAX_NEIGHBOURS = 60;
/**
 * How many of an entity's relations the view reads (in creation order), where it finds its
 * neighbours: a hub's 150,000 are counted, not read (issue 35).
 */
const MAX_RELATIONS_READ = 1_000;

/** Answers GET /api/… for the page; false when the path is not one. */
export async function serveApi(url: URL, service: MemoryService, token: TokenRecord, res: ServerResponse): Promise<boolean> {
  switch (url.pathname) {
    case '/api/session':
      sendJson(res, 200, { namespace: token.namespace, readOnly: token.readOnly });
      return true;
    case '/api/search': {
      const parsed = HybridSearchInputSchema.safeParse({
        query: url.searchParams.get('q') ?? '',
        limit: Number(url.searchParams.get('limit') ?? 20),
        offset: Number(url.searchParams.get('offset') ?? 0),
      });
      if (!parsed.success) {
        sendJson(res, 400, { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ') });
        return true;
      }
      sendJson(res, 200, await service.hybridSearch(toHybridOptions(parsed.data)));
      return true;
    }
    case '/api/entity': {
      sendJson(res, 200, await entityView(service, toNfc(url.searchParams.get('name') ?? '')));
      return true;
    }
    case '/api/recent': {
      // The page's home: the newest entities (creation order, newest first) and the memory's size.
      const limit = 10;
      const { total = 0 } = await service.graphView({ compact: true, page: { limit: 1, offset: 0 } });
      const newest = await service.graphView({ compact: true, page: { limit, offset: Math.max(0, total - limit) } });
      sendJson(res, 200, { total, entities: [...newest.entities].reverse() });
      return true;
    }
    case '/api/stats': {
      // Any token may read this, read-only ones included: the memory's name, never where the server keeps it (issue 26).
      sendJson(res, 200, publicStatistics(await service.statistics()));
      return true;
    }
    default:
      return false;
  }
}

/**
 * One entity as the page shows it: observations with their kinds, status, dates, how often it was
 * recalled, and its neighbours. Read straight from the store, so looking counts as no use.
 */
async function entityView(service: MemoryService, name: string): Promise<unknown> {
  const { graph, usage } = service.store;
  const [id] = await graph.idsByName([name]);
  if (id === undefined) return { found: false, name };
  const entity = (await graph.entitiesById([id])).get(id);
  const signals = await usage.signals([id]);
  const { relations, relationCount = relations.length } = await graph.openNodes([name], {
    offset: 0,
    limit: MAX_RELATIONS_READ,
    includeEnded: true,
  });
  const neighbourNames = [...new Set(relations.flatMap((r) => [r.from, r.to]).filter((n) => n !== name))].slice(0, MAX_NEIGHBOURS);
  const shown = new Set([name, ...neighbourNames]);
  const neighbours = (await graph.openNodes(neighbourNames, { offset: 0, limit: 0, includeEnded: false })).entities.map((e) => ({
    name: e.name,
    entityType: e.entityType,
  }));
  const access = signals.access.get(id);
  return {
    found: true,
    name,
    entityType: entity?.entityType,
    status: entity?.status,
    observations: entity?.observations.map((text, i) => ({ text, kind: entity.kinds[i] ?? 'fact' })) ?? [],
    createdAt: entity?.createdAt,
    updatedAt: entity?.updatedAt,
    usage: {
      accessCount: access?.accessCount ?? 0,
      lastAccess: access?.lastAccess ?? null,
      accessDays: access?.accessDays ?? 0,
      degree: signals.degree.get(id) ?? 0,
    },
    neighbours,
    relations: relations.filter((r) => shown.has(r.from) && shown.has(r.to)),
    relationCount,
    truncated: neighbourNames.length === MAX_NEIGHBOURS || relationCount > relations.length,
  };
}
