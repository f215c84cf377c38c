/**
 * Limbic's MCP App (issue 28, item 3; docs/mcp-app.md) as a client sees it: hybrid_search,
 * search_semantic and open_nodes name one ui:// resource in their `_meta`, resources/list shows it
 * with the MCP App MIME type, and resources/read gives one HTML file that fetches nothing. A host
 * without MCP Apps gets the same answers as one with them: the tools' text and structuredContent do
 * not depend on the extension. The view itself is tested in chromium (explain-app-browser.test.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

const URI = 'ui://limbic/explain.html';
const MIME = 'text/html;profile=mcp-app';
const WITH_VIEW = ['hybrid_search', 'open_nodes', 'search_semantic'];
/** What an MCP Apps host says at the handshake (the extension's capability, spec 2026-01-26). */
const APPS_HOST = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } };

async function seed(h: Harness): Promise<void> {
  await h.ok('create_entities', {
    entities: [
      { name: 'Tomato', entityType: 'plant', observations: ['needs full sun', 'water at the roots in the morning'] },
      { name: 'Basil', entityType: 'plant', observations: ['grows well next to tomatoes', 'keeps aphids away'] },
      { name: 'Greenhouse', entityType: 'place', observations: ['south-facing, built in 2024'] },
    ],
  });
  await h.ok('create_relations', {
    relations: [
      { from: 'Basil', to: 'Tomato', relationType: 'companion of' },
      { from: 'Tomato', to: 'Greenhouse', relationType: 'grows in' },
    ],
  });
  await h.settle();
}

describe('the MCP App: tool metadata and the ui:// resource', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('names the view in the _meta of hybrid_search, search_semantic and open_nodes, and of no other tool', async () => {
    const { tools } = await h.client.listTools();
    const named = tools.filter((t) => t._meta !== undefined).map((t) => t.name);
    expect(named.sort()).toEqual(WITH_VIEW);
    for (const tool of tools.filter((t) => WITH_VIEW.includes(t.name))) {
      // The nested form the spec defines, and the flat key older hosts read (as ext-apps' registerAppTool writes both).
      expect(tool._meta).toEqual({ ui: { resourceUri: URI }, 'ui/resourceUri': URI });
    }
  });

  it('lists the view with the MCP App MIME type and its ui metadata, beside the knowledge graph', async () => {
    const { resources } = await h.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['memory://knowledge-graph', URI]);
    const view = resources.find((r) => r.uri === URI);
    expect(view?.mimeType).toBe(MIME);
    expect(view?._meta).toEqual({ ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } });
  });

  it('reads as one self-contained HTML file: inline script and style, no external URL to load', async () => {
    const { contents } = await h.client.readResource({ uri: URI });
    expect(contents).toHaveLength(1);
    const [view] = contents;
    expect(view?.uri).toBe(URI);
    expect(view?.mimeType).toBe(MIME);
    expect(view?._meta).toEqual({ ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } });
    const html = view !== undefined && 'text' in view ? view.text : '';
    expect(html.slice(0, 15).toLowerCase()).toBe('<!doctype html>');
    // Nothing loaded from anywhere: no src/href to a URL (http, https or protocol-relative), no
    // external script or stylesheet, no CSS import or url(). (A match is shown, not the 600 KB.)
    expect(html.match(/\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?\/\/[^"'\s>]*/gi)).toBeNull();
    expect(html.match(/<script[^>]*\bsrc\s*=|<link\b[^>]*>/gi)).toBeNull();
    const css = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    expect(css).toContain('.why');
    expect(css.match(/@import|url\(/g)).toBeNull();
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html.match(/<style>/g)).toHaveLength(1);
    // The ext-apps App is inside (its initialize method), and the size stays within reason.
    expect(html.includes('ui/initialize')).toBe(true);
    expect(Buffer.byteLength(html)).toBeLessThan(800 * 1024);
  });
});

describe('a host without MCP Apps gets the same answers as one with them', () => {
  let plain: Harness;
  let apps: Harness;
  const clock = () => Date.UTC(2026, 0, 10);
  beforeAll(async () => {
    plain = await harness({ embedder: 'fake', clock });
    apps = await harness({ embedder: 'fake', clock, clientCapabilities: APPS_HOST });
    await seed(plain);
    await seed(apps);
  });
  afterAll(async () => {
    await plain?.close();
    await apps?.close();
  });

  it.each([
    ['hybrid_search', { query: 'tomato sun', explain_query: false }],
    ['search_semantic', { query: 'which plant keeps insects away' }],
    ['open_nodes', { names: ['Tomato'] }],
  ])('%s: identical text and structuredContent, and nothing else in the result', async (tool, args) => {
    const a: CallToolResult = await plain.call(tool, args);
    const b: CallToolResult = await apps.call(tool, args);
    expect(a.isError).toBeUndefined();
    expect(Object.keys(a).sort()).toEqual(['content', 'structuredContent']);
    expect(Object.keys(b).sort()).toEqual(['content', 'structuredContent']);
    expect(b.content).toEqual(a.content);
    expect(b.structuredContent).toEqual(a.structuredContent);
    await plain.settle();
    await apps.settle();
  });
});
