/**
 * Limbic's MCP App (docs/mcp-app.md; the MCP Apps extension, io.modelcontextprotocol/ui, spec
 * 2026-01-26): one ui:// resource, an HTML view a host renders in a sandboxed iframe beside the
 * answers of hybrid_search, search_semantic and open_nodes. Those tools name it in their `_meta`;
 * their answers do not change, so a host without MCP Apps sees exactly what it saw before.
 *
 * Registered with the plain McpServer API (registerResource, and `_meta` in registerTool's config);
 * the wire format is the one ext-apps' server helpers write.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProtocolError, ProtocolErrorCode, type McpServer } from '@modelcontextprotocol/server';

export const EXPLAIN_VIEW_URI = 'ui://limbic/explain.html';
/** The MIME type of an MCP App's HTML (ext-apps' RESOURCE_MIME_TYPE). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * What the three tools carry in their definition: the view's URI as `_meta.ui.resourceUri`, and as
 * the flat `ui/resourceUri` key older hosts read (ext-apps' registerAppTool writes both).
 */
export const EXPLAIN_APP_META: Readonly<Record<string, unknown>> = {
  ui: { resourceUri: EXPLAIN_VIEW_URI },
  'ui/resourceUri': EXPLAIN_VIEW_URI,
};

/**
 * The view's resource metadata: it reaches nothing outside itself (no connect, script, style, image
 * or frame origin: its script and style are inline), and it asks the host for a border, as hosts'
 * defaults vary.
 */
const UI_META = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } } as const;

/**
 * The built view: dist/mcp/app/explain-view.html, beside this module once compiled
 * (scripts/build-mcp-app.mjs writes it); from the sources (tests run them), the built one.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const CANDIDATES = [join(HERE, 'explain-view.html'), join(HERE, '..', '..', '..', 'dist', 'mcp', 'app', 'explain-view.html')];
let cached: string | undefined;

function viewHtml(): string {
  if (cached !== undefined) return cached;
  const path = CANDIDATES.find((p) => existsSync(p));
  if (path === undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The view of ${EXPLAIN_VIEW_URI} was not built (no ${CANDIDATES[0]}): run "npm run build". The tools answer as usual without it.`,
    );
  cached = readFileSync(path, 'utf8');
  return cached;
}

/** Registers the view's ui:// resource; the tools name it with EXPLAIN_APP_META. */
export function registerExplainApp(server: McpServer): void {
  server.registerResource(
    'limbic-explain-view',
    EXPLAIN_VIEW_URI,
    {
      title: 'Why these results (MCP App view)',
      description:
        'The view MCP Apps hosts show beside hybrid_search, search_semantic and open_nodes: which leg found each result, its factors and why it ranked there; an entity’s neighbourhood',
      mimeType: MCP_APP_MIME_TYPE,
      _meta: UI_META,
    },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: MCP_APP_MIME_TYPE, text: viewHtml(), _meta: UI_META }] }),
  );
}
