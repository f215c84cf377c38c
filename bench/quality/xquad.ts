/**
 * XQuAD (../shared/data/xquad): the 240 paragraphs of one language, one entity per paragraph
 * (name = "article <a> #<paragraph index>", entityType "Paragraph", observations = [context]),
 * questions of the same or the other language; hit@1, hit@5, MRR per mode. Every memory holds all
 * 240 paragraphs; the questions are split in two halves by article (a seeded shuffle of the 48
 * articles): parameters are chosen on half A and reported on half B.
 */
import { readFileSync } from 'node:fs';
import { rng } from '../latency/generate.js';
import type { EntityId, NewEntity } from '../../src/core/types.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, loadModel, MODES, requireData, type Probe } from './harness.js';
import { Tally, type Half } from './tally.js';

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { id: string; question: string }[] }[] }[];
}

const SPLIT_SEED = 18;
const LIMIT = 5;
/** Candidates the fusion study reads per leg (hybrid_search's depth). */
const STUDY_DEPTH = 150;
export const XQUAD_GROUPS = ['en→en', 'es→es', 'es→en', 'en→es', 'all'] as const;

export function loadXquad(lang: 'en' | 'es') {
  const squad = JSON.parse(readFileSync(requireData(`xquad/xquad.${lang}.json`), 'utf8')) as Squad;
  const entities: NewEntity[] = [];
  const questions = new Map<string, { question: string; paragraph: string; article: number }>();
  squad.data.forEach((article, a) =>
    article.paragraphs.forEach((p, i) => {
      // Named by the English-independent position so the two languages share names.
      const name = `article ${a} #${i}`;
      entities.push({ name, entityType: 'Paragraph', observations: [p.context] });
      for (const q of p.qas) questions.set(q.id, { question: q.question, paragraph: name, article: a });
    }),
  );
  return { entities, questions, articles: squad.data.length };
}

/** Half of each article: a seeded shuffle of the article indices, its first half is A. */
export function articleHalves(count: number): Half[] {
  const random = rng(SPLIT_SEED);
  const order = [...Array(count).keys()];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const halves: Half[] = Array(count);
  order.forEach((a, i) => (halves[a] = i < count / 2 ? 'A' : 'B'));
  return halves;
}

export async function runXquad(probes?: Probe[]): Promise<{ report: string; tally: Tally }> {
  const embedder = cachedEmbedder(await loadModel());
  const en = loadXquad('en');
  const es = loadXquad('es');
  const halves = articleHalves(en.articles);
  const now = Date.UTC(2026, 0, 1);
  const tally = new Tally();
  const started = performance.now();
  for (const [docs, docLang] of [
    [en, 'en'],
    [es, 'es'],
  ] as const) {
    const corpus = new Corpus(embedder);
    await corpus.load(docs.entities, now);
    const ids = await corpus.ids(docs.entities.map((e) => e.name));
    for (const [qs, qLang] of [
      [en, 'en'],
      [es, 'es'],
    ] as const) {
      const group = `${qLang}→${docLang}`;
      for (const { question, paragraph, article } of qs.questions.values()) {
        const gold = new Set([ids.get(paragraph) as EntityId]);
        const half = halves[article] ?? 'A';
        for (const mode of MODES) tally.add(mode, half, [group, 'all'], await corpus.search(mode, question, LIMIT, now), gold);
        if (probes !== undefined)
          probes.push({ half, group, gold: [...gold], limit: LIMIT, legs: await corpus.legs(question, STUDY_DEPTH) });
      }
    }
    await corpus.close();
    process.stderr.write(`xquad: ${docLang} paragraphs done\n`);
  }
  const metrics = ['hit1', 'hit5', 'mrr'] as const;
  const report = [
    `Limit ${LIMIT}; ${((performance.now() - started) / 1000).toFixed(0)} s. Halves by article (seed ${SPLIT_SEED}); "all" pools the four directions.`,
    '',
    tally.table('A', XQUAD_GROUPS, metrics),
    '',
    tally.table('B', XQUAD_GROUPS, metrics),
  ].join('\n');
  return { report, tally };
}
