/**
 * Recall over imported chat history (issue 34 item 6): LoCoMo (../shared/data/locomo/locomo10.json,
 * read in place) as a ChatGPT export, imported with `limbic import`'s own path, against the same
 * conversations written through the tools, one entity per turn (bench/quality/locomo.ts).
 *
 * The export: each LoCoMo session is one ChatGPT conversation (272), the first speaker as `user`,
 * the other as `assistant`, the two names in the title (the tool-written turns keep the speaker as
 * their entity type); each turn's `create_time` is its session's date plus 30 s a turn; a hidden
 * system message opens each tree; every third assistant turn has a regenerated draft the user
 * discarded (children[0], the text of a turn of another conversation, marked); every 25th turn
 * carries a planted secret (in both variants alike).
 *
 * Both memories are one store each, all ten LoCoMo samples in it, embedded with the real model;
 * every question (categories 1-5) is asked of each. recall_any@5 (hit@5): a question counts when a
 * result in the top 5 shows one of its gold turns — a tool-written turn is its own entity; an
 * imported session counts when it holds a gold turn, and, in `import, turn shown`, only when the
 * answer hybrid_search or search_semantic gives a client (observations bounded, matching ones first) shows that turn:
 * the fair count. The report also says how many characters the top 5 results carry (a session's
 * whole text, and for `turn shown` what the bounded answer really shows).
 *
 *   flock /tmp/limbic-bench.lock npx tsx bench/quality/chat-import.ts [--samples N] [--model ID]
 *
 * Writes bench/results/chat-import-<date>.md.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger } from '../../src/core/logger.js';
import { METADATA_KIND, type EntityId, type NewEntity, type ObservationAddition } from '../../src/core/types.js';
import { LazyEmbedder } from '../../src/embed/embedder.js';
import { toHybridOptions } from '../../src/mcp/hybrid-options.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { hybridSearch } from '../../src/service/search/hybrid-search.js';
import { searchSemantic } from '../../src/service/search/search-semantic.js';
import { createRedactor } from '../../src/service/redaction.js';
import { DEFAULT_OBSERVATION_BOUND } from '../../src/core/rank/shown-observations.js';
import { importConversations } from '../../src/cli/import-conversations.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, f3, loadModel, memoizeQueries, requireData, type Mode } from './harness.js';
import { CATEGORY_NAMES, cleanEvidence, locomoGroups, sessionTime, type Sample } from './locomo.js';
import { Tally } from './tally.js';

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

const LIMIT = 10;
const NOW = Date.UTC(2026, 0, 1);
const DRAFT_MARK = 'regenerated-draft-discarded';
/** Secrets of the shapes the redactor knows, planted in every 25th turn. */
const SECRET_SHAPES = [
  (i: number) => `AKIA${(0x1000000000000000n + BigInt(i) * 7919n).toString(16).toUpperCase().slice(0, 16)}`,
  (i: number) => `ghp_${createHash('sha256').update(`gh${i}`).digest('base64url').replace(/[-_]/g, 'x').slice(0, 36)}`,
  (i: number) => `sk_live_${createHash('sha256').update(`st${i}`).digest('hex').slice(0, 32)}`,
  (i: number) => `postgres://app:${createHash('sha256').update(`pw${i}`).digest('hex').slice(0, 20)}@db.internal:5432/app`,
];
const SECRET_EVERY = 25;
const DRAFT_EVERY = 3;

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

/** A deterministic uuid from a key, so the export is the same on every run. */
function uuidOf(key: string): string {
  const h = createHash('sha1').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

interface Session {
  readonly sample: Sample;
  readonly number: number;
  readonly date: string | undefined;
  readonly turns: LocomoTurn[];
}

function sessionsOf(sample: Sample): Session[] {
  const out: Session[] = [];
  for (const [key, value] of Object.entries(sample.conversation)) {
    const m = /^session_(\d+)$/.exec(key);
    if (m === null || !Array.isArray(value)) continue;
    const date = sample.conversation[`session_${m[1]}_date_time`];
    out.push({ sample, number: Number(m[1]), date: typeof date === 'string' ? date : undefined, turns: value as LocomoTurn[] });
  }
  return out;
}

/** A turn's words as both memories hold them: the text, the image it shared, a planted secret. */
function turnText(turn: LocomoTurn, secret: string | undefined): string {
  let text = turn.text;
  if (turn.blip_caption) text += `\n[shared an image: ${turn.blip_caption}]`;
  if (secret !== undefined) text += `\n(for the record, the deploy credential is ${secret})`;
  return text;
}

interface Built {
  readonly conversations: object[];
  /** `<sample> <dia_id>` → the conversation id that holds it. */
  readonly conversationOf: Map<string, string>;
  /** `<sample> <dia_id>` → the secret its text carries. */
  readonly secrets: Map<string, string>;
  /** `<sample> <dia_id>` → the turn's own words (LoCoMo's text), to find it among a result's shown observations. */
  readonly textOf: Map<string, string>;
  readonly drafts: number;
  readonly turns: number;
}

function buildExport(samples: readonly Sample[]): Built {
  const conversations: object[] = [];
  const conversationOf = new Map<string, string>();
  const secrets = new Map<string, string>();
  const textOf = new Map<string, string>();
  const pool = samples.flatMap((s) => sessionsOf(s).flatMap((x) => x.turns.map((t) => ({ sample: s.sample_id, text: t.text }))));
  let turnIndex = 0;
  let drafts = 0;
  let assistantTurns = 0;
  for (const sample of samples) {
    const speakerA = String(sample.conversation.speaker_a);
    const speakerB = String(sample.conversation.speaker_b);
    for (const session of sessionsOf(sample)) {
      const id = uuidOf(`${sample.sample_id}/session_${session.number}`);
      const start = (session.date === undefined ? undefined : sessionTime(session.date)) ?? NOW;
      const mapping: Record<string, { id: string; message: object | null; parent: string | null; children: string[] }> = {};
      const node = (nodeId: string, parent: string | null, message: object | null) => {
        mapping[nodeId] = { id: nodeId, message, parent, children: [] };
        if (parent !== null) mapping[parent]?.children.push(nodeId);
      };
      node('root', null, null);
      node('system', 'root', {
        id: 'system',
        author: { role: 'system' },
        create_time: null,
        content: { content_type: 'text', parts: [''] },
        metadata: { is_visually_hidden_from_conversation: true },
        recipient: 'all',
      });
      let parent = 'system';
      session.turns.forEach((turn, i) => {
        const role = turn.speaker === speakerA ? 'user' : 'assistant';
        const key = `${sample.sample_id} ${turn.dia_id}`;
        const secret =
          turnIndex % SECRET_EVERY === SECRET_EVERY - 1 ? SECRET_SHAPES[turnIndex % SECRET_SHAPES.length]?.(turnIndex) : undefined;
        turnIndex++;
        if (secret !== undefined) secrets.set(key, secret);
        conversationOf.set(key, id);
        textOf.set(key, turn.text);
        const at = start / 1000 + i * 30;
        if (role === 'assistant' && ++assistantTurns % DRAFT_EVERY === 0) {
          // The reply the user regenerated away: the first child, as ChatGPT keeps it.
          const other = pool[(turnIndex * 7919) % pool.length];
          const draftId = `${turn.dia_id}-draft`;
          node(draftId, parent, {
            id: draftId,
            author: { role: 'assistant' },
            create_time: at - 5,
            content: { content_type: 'text', parts: [`${DRAFT_MARK} ${drafts}: ${other?.text ?? ''}`] },
            metadata: {},
            recipient: 'all',
          });
          drafts++;
        }
        const nodeId = turn.dia_id;
        node(nodeId, parent, {
          id: nodeId,
          author: { role },
          create_time: at,
          content: { content_type: 'text', parts: [turnText(turn, secret)] },
          metadata: {},
          recipient: 'all',
        });
        parent = nodeId;
      });
      conversations.push({
        title: `${speakerA} and ${speakerB}, session ${session.number}`,
        create_time: start / 1000,
        update_time: start / 1000 + session.turns.length * 30,
        mapping,
        current_node: parent,
        conversation_id: id,
        id,
      });
    }
  }
  return { conversations, conversationOf, secrets, textOf, drafts, turns: turnIndex };
}

/** The same conversations through the tools: one entity per turn, its date as a metadata observation (locomo.ts). */
function toolEntities(samples: readonly Sample[], secrets: ReadonlyMap<string, string>) {
  const entities: NewEntity[] = [];
  const writtenAt: (number | undefined)[] = [];
  const additions: ObservationAddition[] = [];
  for (const sample of samples) {
    for (const session of sessionsOf(sample)) {
      for (const turn of session.turns) {
        const name = `${sample.sample_id} ${turn.dia_id}`;
        const observations = [turn.text + (secrets.has(name) ? `\n(for the record, the deploy credential is ${secrets.get(name)})` : '')];
        if (turn.blip_caption) observations.push(`[shared an image: ${turn.blip_caption}]`);
        entities.push({ name, entityType: turn.speaker, observations });
        writtenAt.push(session.date === undefined ? undefined : sessionTime(session.date));
        if (session.date !== undefined) additions.push({ entityName: name, contents: [`date: ${session.date}`], kind: METADATA_KIND });
      }
    }
  }
  return { entities, writtenAt, additions };
}

type BenchMode = Mode | 'hybrid_search';
const BENCH_MODES: readonly BenchMode[] = ['fts', 'semantic', 'hybrid_search', 'hybrid-limbic'];
const MODE_NAMES: Readonly<Record<string, string>> = {
  fts: 'keyword (FTS)',
  semantic: 'semantic',
  hybrid_search: 'hybrid_search (defaults)',
  'hybrid-limbic': 'search_semantic',
};

async function search(corpus: Corpus, mode: BenchMode, query: string): Promise<EntityId[]> {
  if (mode !== 'hybrid_search') return corpus.search(mode, query, LIMIT, NOW);
  return [...(await hybridAnswer(corpus, query)).ids];
}

/** What a client reads of an answer: the ranked ids and the observations each result shows. */
interface Shown {
  readonly ids: readonly EntityId[];
  readonly shown: readonly (readonly string[])[];
}

/** hybrid_search as an MCP client calls it: the default bound on the observations each result shows. */
async function hybridAnswer(corpus: Corpus, query: string): Promise<Shown> {
  const response = await hybridSearch(
    { store: corpus.store, indexer: corpus.indexer, reranker: undefined },
    toHybridOptions({ query, limit: LIMIT }),
    NOW,
  );
  return { ids: response.ids, shown: response.results.map((r) => r.observations) };
}

/** search_semantic as an MCP client calls it (no observations_limit: the default bound). */
async function semanticAnswer(corpus: Corpus, query: string): Promise<Shown> {
  const response = await searchSemantic({ store: corpus.store, indexer: corpus.indexer, reranker: undefined }, query, LIMIT, NOW, {
    observations: DEFAULT_OBSERVATION_BOUND,
  });
  return { ids: response.ids, shown: response.results.map((r) => r.observations) };
}

/** A result that is not an answer: stands in for a gold session whose shown observations lack the gold turn. */
const NOT_SHOWN = -1 as unknown as EntityId;

/** Whether a turn's words are among the observations shown (the stored turn is prefixed and cleaned: its first words suffice). */
function shows(observations: readonly string[], text: string): boolean {
  const probe = text.trim().slice(0, 60);
  return probe !== '' && observations.some((o) => o.includes(probe));
}

/** Every byte of the store's files (the database, its WAL, side files), as latin1 text to search. */
function storeBytes(dir: string): string {
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f)).toString('latin1'))
    .join('\n');
}

async function main(): Promise<void> {
  const all = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const samples = all.slice(0, Number(option('--samples') ?? all.length));
  const built = buildExport(samples);
  const model = cachedEmbedder(await loadModel());
  const tally = new Tally();
  const shown = new Map<string, { chars: number; n: number }>();
  const started = performance.now();

  // The memory written through the tools.
  const tools = new Corpus(model);
  const { entities, writtenAt, additions } = toolEntities(samples, built.secrets);
  let t0 = performance.now();
  await tools.load(entities, NOW, [], additions, writtenAt);
  const toolsSeconds = (performance.now() - t0) / 1000;
  const toolIds = await tools.ids(entities.map((e) => e.name));

  // The memory imported from the export, through the import command's own path.
  const imported = new Corpus(model);
  // The export lives outside the store's folder: every byte of that folder is searched for the secrets below.
  const exportDir = mkdtempSync(join(tmpdir(), 'limbic-chat-export-'));
  const exportPath = join(exportDir, 'conversations.json');
  writeFileSync(exportPath, JSON.stringify(built.conversations));
  const embedder = new LazyEmbedder(async () => memoizeQueries(model));
  // Redaction as `limbic import` runs it (on by default); the tool-written store is loaded below the service, unredacted.
  const service = new MemoryService({
    store: imported.store,
    embedder,
    clock: () => NOW,
    logger: noopLogger,
    redactor: createRedactor(true),
  });
  t0 = performance.now();
  const report = await importConversations(service, exportPath, { kind: 'file', format: 'chatgpt' }, { home: '/nonexistent-home' });
  await imported.indexer.drain();
  const importSeconds = (performance.now() - t0) / 1000;
  const sessionIds = new Map<string, EntityId>();
  /** Characters each entity shows in an answer (name and observations), per memory. */
  const texts = new Map<Corpus, Map<EntityId, number>>();
  let draftsStored = 0;
  for (let cursor = 0; ;) {
    const page = await imported.store.transfer?.readEntities(cursor, 500);
    if (page === undefined) break;
    for (const record of page.records) {
      // The session's metadata says its source's id: "started: 2023-05-08 13:56 UTC, conversation id: …".
      const conversationId = record.observations.map((o) => /conversation id: (\S+)/.exec(o.content)?.[1]).find((x) => x !== undefined);
      const [id] = await imported.store.graph.idsByName([record.name]);
      if (conversationId !== undefined && id !== undefined) sessionIds.set(conversationId, id);
      draftsStored += record.observations.filter((o) => o.content.includes(DRAFT_MARK)).length;
    }
    if (page.next === undefined) break;
    cursor = page.next;
  }
  for (const c of [tools, imported]) {
    const sizes = new Map<EntityId, number>();
    const graph = await c.store.graph.readGraph();
    const ids = await c.store.graph.idsByName(graph.entities.map((e) => e.name));
    graph.entities.forEach((e, i) => {
      const id = ids[i];
      if (id !== undefined) sizes.set(id, e.observations.join('\n').length + e.name.length);
    });
    texts.set(c, sizes);
  }
  const importedBytes = storeBytes(imported.dir);
  const toolBytes = storeBytes(tools.dir);
  const secretsInBytes = [...built.secrets.values()].filter((s) => importedBytes.includes(s)).length;
  const secretsInToolBytes = [...built.secrets.values()].filter((s) => toolBytes.includes(s)).length;

  let questions = 0;
  for (const sample of samples) {
    for (const qa of sample.qa) {
      const keys = cleanEvidence(qa.evidence).map((d) => `${sample.sample_id} ${d}`);
      const toolGold = new Set(keys.map((k) => toolIds.get(k)).filter((x): x is EntityId => x !== undefined));
      const importGold = new Set(
        keys.map((k) => sessionIds.get(built.conversationOf.get(k) ?? '')).filter((x): x is EntityId => x !== undefined),
      );
      if (toolGold.size === 0) continue;
      questions++;
      const groups = locomoGroups(`cat${qa.category}`);
      for (const mode of BENCH_MODES) {
        for (const [variant, corpus, gold] of [
          ['tools', tools, toolGold],
          ['import', imported, importGold],
        ] as const) {
          const ranked = await search(corpus, mode, qa.question);
          const label = `${variant}: ${MODE_NAMES[mode] ?? mode}`;
          tally.add(label, 'A', groups, ranked, gold);
          const cost = shown.get(label) ?? { chars: 0, n: 0 };
          cost.chars += ranked.slice(0, 5).reduce((n, id) => n + (texts.get(corpus)?.get(id) ?? 0), 0);
          cost.n++;
          shown.set(label, cost);
        }
        if (mode === 'hybrid_search' || mode === 'hybrid-limbic') {
          // The fair count for a session: found, and one of its gold turns among the observations the answer shows.
          const texts = keys.map((k) => built.textOf.get(k) ?? '');
          const answer = mode === 'hybrid_search' ? await hybridAnswer(imported, qa.question) : await semanticAnswer(imported, qa.question);
          const ranked = answer.ids.map((id, i) =>
            importGold.has(id) && texts.some((t) => shows(answer.shown[i] ?? [], t)) ? id : NOT_SHOWN,
          );
          const label = `import, turn shown: ${MODE_NAMES[mode]}`;
          tally.add(label, 'A', groups, ranked, importGold);
          const cost = shown.get(label) ?? { chars: 0, n: 0 };
          cost.chars += answer.shown.slice(0, 5).reduce((n, o) => n + o.join('\n').length, 0);
          cost.n++;
          shown.set(label, cost);
        }
      }
    }
    process.stderr.write(`chat-import: ${sample.sample_id} asked\n`);
  }
  await service.close();
  await tools.close();
  await imported.close();
  rmSync(exportDir, { recursive: true, force: true });

  const seconds = (performance.now() - started) / 1000;
  const lines = [
    `# Recall over an imported ChatGPT export against the same conversations written through the tools`,
    '',
    `LoCoMo as a ChatGPT export: ${built.conversations.length} conversations (one per session), ${built.turns} turns, ${built.drafts} regenerated drafts the user discarded, ${built.secrets.size} planted secrets. ${questions} questions (categories 1-5), one store per memory holding all ${samples.length} samples, model ${model.id}. Limit ${LIMIT}; recall_any@5 = hit@5.`,
    '',
    `- Import: ${report.conversations} conversations, ${report.turns} turns read, ${report.turnsAdded} stored, ${report.turnsSkipped} not (acknowledgements), skipped ${JSON.stringify(report.skipped)}, redactions ${JSON.stringify(report.redactions)}; ${importSeconds.toFixed(0)} s with embedding. Tools: ${entities.length} entities in ${toolsSeconds.toFixed(0)} s.`,
    `- Discarded drafts stored: ${draftsStored}. Planted secrets found in the imported store's bytes (database, WAL, side files): ${secretsInBytes} of ${built.secrets.size} (the tool-written store, loaded below the service and so unredacted, as a check that the search for them works: ${secretsInToolBytes}).`,
    `- The whole run: ${seconds.toFixed(0)} s.`,
    '',
    tally
      .table('A', ['all 1-4', 'all 1-5', 'cat1', 'cat2', 'cat3', 'cat4', 'cat5'], ['hit5', 'hit1', 'mrr', 'recall5'], {
        ...CATEGORY_NAMES,
        'all 1-4': 'all 1-4',
        'all 1-5': 'all 1-5',
      })
      .replace('half A (tuning)', 'questions'),
    '',
    '| memory: mode | characters in the top 5 results (mean) |',
    '|---|---|',
    ...[...shown].map(([label, c]) => `| ${label} | ${Math.round(c.chars / Math.max(c.n, 1)).toLocaleString('en-US')} |`),
    '',
    `hit@5 (recall_any@5) over all 1-5, a session counted only when its answer shows a gold turn (the default bound on shown observations): hybrid_search ${f3(tally.mean(`import, turn shown: ${MODE_NAMES.hybrid_search}`, 'A', 'all 1-5', 'hit5'))}, search_semantic ${f3(tally.mean(`import, turn shown: ${MODE_NAMES['hybrid-limbic']}`, 'A', 'all 1-5', 'hit5'))}.`,
    '',
    `hit@5 (recall_any@5) over all 1-5: ${BENCH_MODES.map((m) => `${MODE_NAMES[m]} tools ${f3(tally.mean(`tools: ${MODE_NAMES[m]}`, 'A', 'all 1-5', 'hit5'))} / import ${f3(tally.mean(`import: ${MODE_NAMES[m]}`, 'A', 'all 1-5', 'hit5'))}`).join('; ')}.`,
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  const base = join(import.meta.dirname, '..', 'results', `chat-import-${new Date().toISOString().slice(0, 10)}`);
  let path = `${base}.md`;
  for (let n = 2; existsSync(path); n++) path = `${base}-${n}.md`;
  writeFileSync(path, `${text}\n`);
  process.stderr.write(`chat-import: wrote ${path}\n`);
}

await main();
