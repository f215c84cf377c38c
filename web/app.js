// Limbic's page: plain JS, no build step. Reads the memory through /api/* with the bearer token the
// user typed (kept in sessionStorage: this tab only). Every value is set as text, never as HTML.
/* global document, window, location, sessionStorage, fetch */
import { fmt, plural, scoreRows, searchedNote, snippet, why } from './why.js';

const KEY = 'limbic-token';
const $ = (id) => document.getElementById(id);
const views = ['login', 'search', 'entity', 'stats'];
let graph; // the cytoscape instance of the entity view

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

class AuthError extends Error {}

async function api(path) {
  const token = sessionStorage.getItem(KEY);
  if (!token) throw new AuthError('Log in with a token first.');
  const res = await fetch(path, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.json().catch(() => ({}));
  if (res.status === 401) throw new AuthError(body.error?.message ?? 'The token was refused.');
  if (!res.ok) throw new Error(body.error?.message ?? body.error ?? `HTTP ${res.status}`);
  return body;
}

function show(view) {
  for (const v of views) $(v).hidden = v !== view;
  $('nav').hidden = view === 'login';
  $('nav-search').toggleAttribute('aria-current', view === 'search' || view === 'entity');
  $('nav-stats').toggleAttribute('aria-current', view === 'stats');
  if ($('nav-search').hasAttribute('aria-current')) $('nav-search').setAttribute('aria-current', 'page');
  if ($('nav-stats').hasAttribute('aria-current')) $('nav-stats').setAttribute('aria-current', 'page');
  $('error').textContent = '';
}

function scoreList(s) {
  return el('dl', { class: 'scores' }, ...scoreRows(s).map(([k, v]) => el('div', {}, el('dt', {}, k), el('dd', {}, fmt(v)))));
}

async function runSearch(q) {
  show('search');
  $('q').value = q;
  $('results').replaceChildren();
  if (!q) {
    $('search-summary').textContent = 'Type words or a question, then Enter.';
    await showRecent();
    return;
  }
  $('search-summary').textContent = 'Searching…';
  const answer = await api(`/api/search?q=${encodeURIComponent(q)}&limit=20`);
  const warn = answer.warnings?.length ? ` ${answer.warnings.join(' ')}` : '';
  $('search-summary').textContent =
    `${answer.results.length} of ${plural(answer.count, 'result')} (legs: ${answer.search_modes_used.join(', ')}; fusion ${answer.fusion_method}).${searchedNote(answer)}${warn}`;
  answer.results.forEach((r, i) => {
    $('results').append(
      el(
        'li',
        {},
        el('a', { class: 'result-link', href: `#/entity/${encodeURIComponent(r.name)}` }, r.name),
        el('span', { class: 'type' }, r.entityType),
        r.status !== 'active' ? el('span', { class: 'badge' }, r.status) : null,
        r.observations.length ? el('p', { class: 'snippet' }, snippet(r.observations, q)) : null,
        el('p', { class: 'why' }, why(r.scores, i + 1 + answer.offset)),
        scoreList(r.scores),
      ),
    );
  });
}

/** The home view: how large the memory is and its newest entities, each a link to its page. */
async function showRecent() {
  const recent = await api('/api/recent');
  if (recent.total === 0) {
    $('search-summary').textContent = 'This memory is empty: an agent connected to Limbic fills it as it learns.';
    return;
  }
  $('search-summary').textContent =
    `${recent.total} ${recent.total === 1 ? 'entity' : 'entities'} in this memory. The newest, or type words or a question, then Enter:`;
  $('results').replaceChildren(
    ...recent.entities.map((e) =>
      el(
        'li',
        { class: 'recent' },
        el('a', { class: 'result-link', href: `#/entity/${encodeURIComponent(e.name)}` }, e.name),
        el('span', { class: 'type' }, e.entityType),
        el('span', { class: 'count' }, `${e.observationCount} observation${e.observationCount === 1 ? '' : 's'}`),
      ),
    ),
  );
}

function drawGraph(view) {
  if (graph) graph.destroy();
  const nodes = [
    { data: { id: view.name, label: view.name, center: 'yes' } },
    ...view.neighbours.map((n) => ({ data: { id: n.name, label: `${n.name}\n(${n.entityType})` } })),
  ];
  const ids = new Set(nodes.map((n) => n.data.id));
  const around = view.neighbours.length;
  const radius = Math.max(170, (around * 110) / (2 * Math.PI));
  const ring = new Map([[view.name, { x: 0, y: 0 }]]);
  view.neighbours.forEach((n, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * (i + 0.5)) / around;
    ring.set(n.name, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
  });
  const edges = view.relations
    .filter((r) => ids.has(r.from) && ids.has(r.to))
    .map((r, i) => ({ data: { id: `e${i}`, source: r.from, target: r.to, label: r.relationType, ended: r.ended_at ? 'yes' : 'no' } }));
  graph = window.cytoscape({
    container: $('graph'),
    elements: [...nodes, ...edges],
    // The entity in the middle, its neighbours on a ring around it, far enough apart for their
    // labels: the same drawing every time, and a relation's name (at its middle, along it) clear of
    // the entities' names (below them). No neighbour sits straight below, under the centre's name.
    layout: { name: 'preset', positions: (node) => ring.get(node.id()), fit: true, padding: 30, animate: false },
    wheelSensitivity: 0.3,
    style: [
      {
        selector: 'node',
        style: {
          label: 'data(label)',
          'text-wrap': 'wrap',
          'font-size': 10,
          'background-color': '#8fa8d8',
          'text-valign': 'bottom',
          'text-margin-y': 4,
        },
      },
      { selector: 'node[center = "yes"]', style: { 'background-color': '#2c5fb8', width: 38, height: 38, 'font-weight': 'bold' } },
      {
        selector: 'edge',
        style: {
          label: 'data(label)',
          'font-size': 9,
          'text-rotation': 'autorotate',
          'text-background-color': '#ffffff',
          'text-background-opacity': 0.85,
          'text-background-padding': 2,
          'curve-style': 'bezier',
          'target-arrow-shape': 'triangle',
          width: 1.5,
          'line-color': '#9aa3b5',
          'target-arrow-color': '#9aa3b5',
          color: '#5b6475',
        },
      },
      // A relation end_relation ended: it held once and no longer does.
      { selector: 'edge[ended = "yes"]', style: { 'line-style': 'dashed', 'line-color': '#c3c8d2', 'target-arrow-color': '#c3c8d2' } },
    ],
  });
  graph.on('tap', 'node', (e) => {
    if (e.target.id() !== view.name) location.hash = `#/entity/${encodeURIComponent(e.target.id())}`;
  });
  $('graph').dataset.nodes = String(nodes.length);
}

async function openEntity(name) {
  show('entity');
  const view = await api(`/api/entity?name=${encodeURIComponent(name)}`);
  $('entity-name').textContent = name;
  if (!view.found) {
    $('entity-meta').textContent = 'No entity of that name in this namespace.';
    $('entity-observations').replaceChildren();
    $('entity-usage').replaceChildren();
    $('entity-relations').replaceChildren();
    // Not the previous entity's neighbourhood under this one's name.
    if (graph) graph.destroy();
    graph = undefined;
    $('graph').replaceChildren();
    $('graph').dataset.nodes = '0';
    return;
  }
  $('entity-meta').textContent =
    `${view.entityType} · ${view.status} · created ${new Date(view.createdAt).toLocaleString()} · updated ${new Date(view.updatedAt).toLocaleString()}`;
  // A kind is shown only when it is not the ordinary one.
  $('entity-observations').replaceChildren(
    ...view.observations.map((o) =>
      o.kind === 'generic' || o.kind === 'fact' ? el('li', {}, o.text) : el('li', {}, o.text, el('span', { class: 'kind' }, o.kind)),
    ),
  );
  const u = view.usage;
  $('entity-usage').replaceChildren(
    el('dt', {}, 'used'),
    el(
      'dd',
      {},
      `${u.accessCount} ${u.accessCount === 1 ? 'time' : 'times'} on ${u.accessDays} ${u.accessDays === 1 ? 'day' : 'days'} (opened, extended or related by the agent)`,
    ),
    el('dt', {}, 'last used'),
    el('dd', {}, u.lastAccess ? new Date(u.lastAccess).toLocaleString() : 'never'),
    el('dt', {}, 'relations'),
    el('dd', {}, String(u.degree)),
  );
  $('entity-relations').replaceChildren(
    ...view.relations.map((r) => {
      const other = r.from === name ? r.to : r.from;
      return el(
        'li',
        r.ended_at ? { class: 'ended' } : {},
        `${r.from} —${r.relationType}→ ${r.to} `,
        // A relation that no longer holds says so; listed plain, it would read as current.
        r.ended_at ? el('span', { class: 'badge' }, `ended ${new Date(r.ended_at).toLocaleDateString()}`) : null,
        other !== name
          ? el(
              'button',
              {
                type: 'button',
                onclick: () => {
                  location.hash = `#/entity/${encodeURIComponent(other)}`;
                },
              },
              `open ${other}`,
            )
          : null,
      );
    }),
  );
  drawGraph(view);
}

async function openStats() {
  show('stats');
  const s = await api('/api/stats');
  const mb = (b) => (b === null ? 'unknown' : `${(b / 1048576).toFixed(2)} MB`);
  const rows = [
    ['entities', s.entities],
    ['observations', s.observations],
    ['relations', s.relations],
    ['embedding model', s.embeddings.model ?? 'none'],
    ['model state', s.embeddings.state + (s.embeddings.reason ? ` (${s.embeddings.reason})` : '')],
    ['embedded', s.embeddings.indexed],
    ['waiting to be embedded', s.embeddings.pending],
    ['keyword index', s.fts.available ? `yes (${s.fts.indexed})` : 'no'],
    ['database size', mb(s.database.bytes)],
    ['database', s.database.path],
  ];
  $('stats-list').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));
}

async function route() {
  if (!sessionStorage.getItem(KEY)) {
    show('login');
    $('token').focus();
    return;
  }
  const hash = location.hash || '#/search';
  try {
    if (!$('who').textContent) {
      const who = await api('/api/session');
      $('who').textContent = `namespace ${who.namespace}${who.readOnly ? ' (read-only)' : ''}`;
    }
    if (hash.startsWith('#/entity/')) await openEntity(decodeURIComponent(hash.slice('#/entity/'.length)));
    else if (hash.startsWith('#/stats')) await openStats();
    else await runSearch(decodeURIComponent(hash.split('?q=')[1] ?? ''));
    if (!$('search').hidden && !$('q').value) $('q').focus();
    else $('main').focus({ preventScroll: true });
  } catch (error) {
    if (error instanceof AuthError) {
      sessionStorage.removeItem(KEY);
      $('who').textContent = '';
      show('login');
      $('login-error').textContent = error.message;
      $('token').focus();
    } else {
      $('error').textContent = error.message;
    }
  }
}

$('login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(KEY, $('token').value.trim());
  $('token').value = '';
  $('login-error').textContent = '';
  location.hash = '#/search';
  void route();
});
$('search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  location.hash = `#/search?q=${encodeURIComponent($('q').value.trim())}`;
});
$('logout').addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  $('who').textContent = '';
  location.hash = '';
  void route();
});
document.addEventListener('keydown', (e) => {
  if (e.key === '/' && document.activeElement?.tagName !== 'INPUT' && !$('search').hidden) {
    e.preventDefault();
    $('q').focus();
  }
});
window.addEventListener('hashchange', () => void route());
void route();
