// The view of Limbic's MCP App (docs/mcp-app.md): inside the conversation, a host that renders MCP
// Apps shows hybrid_search and search_semantic answers as the page does (the leg that found each
// result, its factors, the sentence on why it ranked there) and open_nodes' entities with their
// neighbourhood. It reads only what the host passes it (the tool's arguments and result) and fetches
// nothing: scripts/build-mcp-app.mjs bundles it with the ext-apps App into one HTML file.
// Every value is set as text, never as HTML.
/* global document, window */
import { App, applyDocumentTheme, applyHostStyleVariables } from '@modelcontextprotocol/ext-apps/app-with-deps';
import {
  fmt,
  hybridLegs,
  plural,
  scoreRows,
  searchedNote,
  semanticLegs,
  semanticRows,
  semanticWhy,
  snippet,
  why,
} from '../../../../web/why.js';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg'; // a namespace name, never fetched

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const factors = (rows) => el('dl', { class: 'scores' }, ...rows.map(([k, v]) => el('div', {}, el('dt', {}, k), el('dd', {}, fmt(v)))));

/** A badge per leg that found the result, with its rank in that leg when the answer gives one. */
const legBadges = (legs, ranks = {}) =>
  legs.map((leg) => el('span', { class: `leg leg-${leg}`, 'data-leg': leg }, ranks[leg] === undefined ? leg : `${leg} #${ranks[leg]}`));

function say(text, kind = 'summary') {
  $('status').textContent = text;
  $('status').className = kind;
}

/** The arguments the tool was called with (ui/notifications/tool-input): the query, for the snippet. */
let args = {};

function renderHybrid(answer) {
  const warn = answer.warnings?.length ? ` ${answer.warnings.join(' ')}` : '';
  const hint = answer.hint ? ` ${answer.hint}` : '';
  const routing = answer.routing_strategy ? `; routing ${answer.routing_strategy}` : '';
  say(
    `${answer.results.length} of ${plural(answer.count, 'result')} for “${answer.query}” (legs: ${answer.search_modes_used.join(', ')}; fusion ${answer.fusion_method}${routing}).${searchedNote(answer)}${warn}${hint}`,
  );
  $('results').replaceChildren(
    ...answer.results.map((r, i) => {
      const s = r.scores;
      return el(
        'li',
        { 'data-name': r.name },
        el('span', { class: 'name' }, r.name),
        el('span', { class: 'type' }, r.entityType),
        r.status !== 'active' ? el('span', { class: 'badge' }, r.status) : null,
        ...legBadges(hybridLegs(s), { keyword: s.fts_rank ?? undefined, semantic: s.semantic_rank ?? undefined }),
        r.observations.length ? el('p', { class: 'snippet' }, snippet(r.observations, answer.query)) : null,
        el('p', { class: 'why' }, why(s, i + 1 + answer.offset)),
        factors(scoreRows(s)),
      );
    }),
  );
  if (answer.stats) $('stats').replaceChildren(statsOf(answer.stats));
}

/** explain_query's stats: what each leg returned and how long it took, and how the legs overlapped. */
function statsOf(stats) {
  const rows = [['total', `${fmt(stats.execution_time_ms, 1)} ms`]];
  if (stats.fts_stats)
    rows.push(['keyword leg', `${plural(stats.fts_stats.rows_returned, 'row')} in ${fmt(stats.fts_stats.execution_time_ms, 1)} ms`]);
  if (stats.semantic_stats)
    rows.push([
      'semantic leg',
      `${plural(stats.semantic_stats.rows_returned, 'row')} in ${fmt(stats.semantic_stats.execution_time_ms, 1)} ms (embedding ${fmt(stats.semantic_stats.embedding_generation_ms, 1)} ms)`,
    ]);
  const f = stats.fusion_stats;
  if (f)
    rows.push([
      'fusion',
      `${f.method}: ${plural(f.total_unique_documents, 'candidate')}, ${f.documents_in_both} found by both legs, ${f.documents_fts_only} by words only, ${f.documents_semantic_only} by meaning only`,
    ]);
  return el(
    'details',
    { open: '' },
    el('summary', {}, 'How the search ran'),
    el('dl', { class: 'facts' }, ...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
  );
}

function renderSemantic(answer) {
  const query = typeof args.query === 'string' ? args.query : '';
  const about = query ? ` for “${query}”` : '';
  const legs =
    answer.mode === 'hybrid'
      ? ' A distance marks what the semantic leg found; a result without one was found by words alone.'
      : answer.mode === 'keyword'
        ? ' Words only: the semantic leg did not run.'
        : '';
  say(
    `${plural(answer.results.length, 'result')}${about} (legs: ${answer.mode}; routing ${answer.routing_strategy}).${legs}${searchedNote(answer)}${answer.warning ? ` ${answer.warning}` : ''}`,
  );
  $('results').replaceChildren(
    ...answer.results.map((r, i) =>
      el(
        'li',
        { 'data-name': r.name },
        el('span', { class: 'name' }, r.name),
        el('span', { class: 'type' }, r.entityType),
        ...legBadges(semanticLegs(r, answer.mode)),
        r.observations.length ? el('p', { class: 'snippet' }, snippet(r.observations, query)) : null,
        el('p', { class: 'why' }, semanticWhy(r, i + 1)),
        factors(semanticRows(r)),
      ),
    ),
  );
}

/** How many neighbours the drawing shows, as the page's entity view; every relation is still listed. */
const MAX_NEIGHBOURS = 60;

function renderGraph(graph) {
  const opened = graph.entities.map((e) => e.name);
  const seen = new Set(opened);
  const neighbours = [];
  for (const r of graph.relations)
    for (const end of [r.from, r.to])
      if (!seen.has(end)) {
        seen.add(end);
        neighbours.push(end);
      }
  const drawn = neighbours.slice(0, MAX_NEIGHBOURS);
  const more = neighbours.length - drawn.length;
  // open_nodes pages a hub's relations (relationCount when there are more than it carries).
  const listed = graph.relations.length;
  const count = typeof graph.relationCount === 'number' && graph.relationCount > listed ? graph.relationCount : listed;
  const relations = count > listed ? `${listed} of ${count} relations` : `${listed} relation${listed === 1 ? '' : 's'}`;
  say(
    `${opened.length} ${opened.length === 1 ? 'entity' : 'entities'}, ${relations}, ${neighbours.length} neighbour${neighbours.length === 1 ? '' : 's'}${more > 0 ? ` (${drawn.length} drawn)` : ''}.`,
  );
  $('entities').replaceChildren(
    ...graph.entities.map((e) =>
      el(
        'section',
        { class: 'entity', 'data-name': e.name },
        el('h2', {}, e.name, el('span', { class: 'type' }, e.entityType)),
        el(
          'ul',
          { class: 'observations' },
          ...e.observations.map((o, i) => {
            const kind = e.observation_kinds?.[i];
            return kind === undefined || kind === 'generic' ? el('li', {}, o) : el('li', {}, o, el('span', { class: 'kind' }, kind));
          }),
        ),
        e.observationCount !== undefined && e.observationCount > e.observations.length
          ? el('p', { class: 'summary' }, `${e.observations.length} of ${e.observationCount} observations shown.`)
          : null,
      ),
    ),
  );
  $('graph').replaceChildren(drawNeighbourhood(opened, drawn, graph.relations));
  $('relations').replaceChildren(
    ...graph.relations.map((r) =>
      el(
        'li',
        { 'data-from': r.from, 'data-to': r.to, 'data-type': r.relationType },
        `${r.from} —${r.relationType}→ ${r.to}`,
        r.context ? el('span', { class: 'context' }, ` (${r.context})`) : null,
        r.ended_at ? el('span', { class: 'badge' }, `ended ${r.ended_at}`) : null,
      ),
    ),
  );
  $('neighbourhood').hidden = graph.relations.length === 0;
}

/**
 * The opened entities in the middle (one at the centre, several on a small ring) and their neighbours
 * on a ring around them, far enough apart for their names; a relation is a line with an arrow, its
 * type at its middle. As the page draws it with cytoscape, drawn here as plain SVG: no library to
 * inline for one picture.
 */
function drawNeighbourhood(opened, neighbours, relations) {
  const at = new Map();
  const isOpened = new Set(opened);
  const ring = (names, radius, offset) =>
    names.forEach((name, i) => {
      const angle = -Math.PI / 2 + offset + (2 * Math.PI * i) / names.length;
      at.set(name, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
    });
  const inner = opened.length === 1 ? 0 : Math.max(60, (opened.length * 90) / (2 * Math.PI));
  ring(opened, inner, 0);
  const outer = Math.max(inner + 150, (neighbours.length * 100) / (2 * Math.PI));
  // No neighbour straight below the centre, under its name: an odd count starts at the top, an even
  // one half a step round.
  ring(neighbours, outer, neighbours.length % 2 === 0 && neighbours.length > 0 ? Math.PI / neighbours.length : 0);
  const pad = 70;
  const size = 2 * (outer + pad);
  const root = svg('svg', {
    viewBox: `${-size / 2} ${-size / 2} ${size} ${size}`,
    role: 'img',
    'aria-label': `Graph of ${opened.join(', ')} and ${neighbours.length} neighbour${neighbours.length === 1 ? '' : 's'}`,
  });
  const defs = svg('defs');
  const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' });
  marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }));
  defs.append(marker);
  root.append(defs);
  const R = 14;
  for (const r of relations) {
    const a = at.get(r.from);
    const b = at.get(r.to);
    if (a === undefined || b === undefined || r.from === r.to) continue;
    const len = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const [ux, uy] = [(b.x - a.x) / len, (b.y - a.y) / len];
    const g = svg('g', { class: 'edge', 'data-from': r.from, 'data-to': r.to, 'data-type': r.relationType });
    g.append(
      svg('line', { x1: a.x + ux * R, y1: a.y + uy * R, x2: b.x - ux * R, y2: b.y - uy * R, 'marker-end': 'url(#arrow)' }),
      svg('text', { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, 'text-anchor': 'middle' }, r.relationType),
    );
    root.append(g);
  }
  for (const [name, p] of at) {
    const g = svg('g', { class: isOpened.has(name) ? 'node opened' : 'node', 'data-name': name });
    g.append(
      svg('circle', { cx: p.x, cy: p.y, r: isOpened.has(name) ? R + 4 : R }),
      svg('text', { x: p.x, y: p.y + R + 16, 'text-anchor': 'middle' }, name),
    );
    root.append(g);
  }
  return root;
}

/** Shows a tool result: the answer of one of the three tools, or its error. */
function render(result) {
  $('results').replaceChildren();
  $('entities').replaceChildren();
  $('stats').replaceChildren();
  $('neighbourhood').hidden = true;
  const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
  if (result.isError) return say(text || 'The tool answered with an error.', 'error');
  const answer = result.structuredContent;
  if (answer && Array.isArray(answer.results) && 'fusion_method' in answer) return renderHybrid(answer);
  if (answer && Array.isArray(answer.results) && 'mode' in answer) return renderSemantic(answer);
  if (answer && Array.isArray(answer.entities) && Array.isArray(answer.relations)) return renderGraph(answer);
  say(text || 'Nothing to show for this answer.');
}

function theme(context) {
  if (context?.theme) applyDocumentTheme(context.theme);
  if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables);
}

const app = new App({ name: 'Limbic', version: '1' }, {}, { autoResize: true });
// Handlers first: the host sends the arguments and the result as soon as the view is initialized.
app.ontoolinput = (params) => {
  args = params.arguments ?? {};
  if (typeof args.query === 'string') say(`Searching for “${args.query}”…`);
  else if (Array.isArray(args.names)) say(`Opening ${args.names.join(', ')}…`);
};
app.ontoolresult = (result) => render(result);
app.ontoolcancelled = (params) => say(`The call was cancelled${params.reason ? `: ${params.reason}` : ''}.`);
app.onhostcontextchanged = (context) => theme(context);
app.onerror = (error) => window.console.error(error);
app
  .connect()
  .then(() => theme(app.getHostContext()))
  .catch((error) => say(`Could not reach the host: ${error instanceof Error ? error.message : String(error)}`, 'error'));
