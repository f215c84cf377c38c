/**
 * XQuAD (../shared/data/xquad): the 240 paragraphs of one language, one entity per paragraph
 * (name = "<article title> #<paragraph index>", entityType "Paragraph", observations = [context]),
 * questions of the same or the other language; hit@1, hit@5, MRR per mode.
 */
import { readFileSync } from 'node:fs';
import type { EntityId, NewEntity } from '../../src/core/types.js';
import { Corpus, emptyScores, f3, loadModel, mean, MODES, requireData, score, type Mode, type Scores } from './harness.js';

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { id: string; question: string }[] }[] }[];
}

function load(lang: 'en' | 'es') {
  const squad = JSON.parse(readFileSync(requireData(`xquad/xquad.${lang}.json`), 'utf8')) as Squad;
  const entities: NewEntity[] = [];
  const questions = new Map<string, { question: string; paragraph: string }>();
  squad.data.forEach((article, a) =>
    article.paragraphs.forEach((p, i) => {
      // Named by the English-independent position so the two languages share names.
      const name = `article ${a} #${i}`;
      entities.push({ name, entityType: 'Paragraph', observations: [p.context] });
      for (const q of p.qas) questions.set(q.id, { question: q.question, paragraph: name });
    }),
  );
  return { entities, questions };
}

export async function runXquad() {
  const embedder = await loadModel();
  const en = load('en');
  const es = load('es');
  const now = Date.UTC(2026, 0, 1);
  const lines = ['| task | mode | n | hit@1 | hit@5 | MRR |', '|---|---|---|---|---|---|'];
  for (const [docs, docLang] of [[en, 'en'], [es, 'es']] as const) {
    const corpus = new Corpus(embedder);
    await corpus.load(docs.entities, now);
    const ids = await corpus.ids(docs.entities.map((e) => e.name));
    for (const [qs, qLang] of [[en, 'en'], [es, 'es']] as const) {
      for (const mode of MODES) {
        const s: Scores = emptyScores();
        for (const { question, paragraph } of qs.questions.values()) {
          const gold = new Set([ids.get(paragraph) as EntityId]);
          score(s, await corpus.search(mode as Mode, question, 5, now), gold);
        }
        const m = mean(s);
        lines.push(`| ${qLang}→${docLang} | ${mode} | ${s.n} | ${f3(m.hit1)} | ${f3(m.hit5)} | ${f3(m.mrr)} |`);
      }
    }
    await corpus.close();
    process.stderr.write(`xquad: ${docLang} paragraphs done\n`);
  }
  return lines.join('\n');
}
