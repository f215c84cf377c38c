/**
 * LoCoMo (../shared/data/locomo/locomo10.json): one store per sample, ONE ENTITY PER TURN
 * (name = dia_id such as "D1:3", entityType = the speaker, observations = [turn text, plus the
 * image caption when the turn shared one]). Each question of categories 1-4 is asked under every
 * mode; recall@k is the share of its (cleaned) gold turns in the top k.
 */
import { readFileSync } from 'node:fs';
import type { EntityId, NewEntity, Relation } from '../../src/core/types.js';
import { Corpus, emptyScores, f3, GRAPH_MODES, loadModel, mean, MODES, requireData, score, type Mode, type Scores } from './harness.js';

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence: string[]; category: number }[];
}

/** "D8:6; D9:17" → two ids; "D:11:26" → "D11:26"; "D30:05" → "D30:5". */
export function cleanEvidence(raw: readonly string[]): string[] {
  const ids: string[] = [];
  for (const chunk of raw) {
    for (const part of chunk.split(/[;,\s]+/).filter(Boolean)) {
      const m = /^D:?(\d+):0*(\d+)$/.exec(part.trim());
      if (m) ids.push(`D${m[1]}:${m[2]}`);
    }
  }
  return ids;
}

export async function runLocomo(limitSamples = Infinity) {
  const data = JSON.parse(readFileSync(requireData('locomo/locomo10.json'), 'utf8')) as Sample[];
  const embedder = await loadModel();
  const perMode = new Map<string, Map<string, Scores>>();
  const now = Date.UTC(2026, 0, 1);
  let turns = 0;
  let questions = 0;
  let embedMs = 0;
  for (const sample of data.slice(0, limitSamples)) {
    const entities: NewEntity[] = [];
    const next: Relation[] = [];
    for (const [key, value] of Object.entries(sample.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      let previous: string | undefined;
      for (const turn of value as Turn[]) {
        const observations = [turn.text];
        if (turn.blip_caption) observations.push(`[shared an image: ${turn.blip_caption}]`);
        entities.push({ name: turn.dia_id, entityType: turn.speaker, observations });
        if (previous !== undefined) next.push({ from: previous, to: turn.dia_id, relationType: 'followed_by' });
        previous = turn.dia_id;
      }
    }
    turns += entities.length;
    // Plain turns for every mode; a second store whose turns are linked to the next turn of their
    // session (the relation is part of each turn's embedded text there) for the graph column.
    for (const [variant, relations, modes] of [
      ['', [] as Relation[], MODES],
      [' +followed_by', next, GRAPH_MODES],
    ] as const) {
      const corpus = new Corpus(embedder);
      const t0 = performance.now();
      await corpus.load(entities, now, relations);
      embedMs += performance.now() - t0;
      const ids = await corpus.ids(entities.map((e) => e.name));
      for (const qa of sample.qa) {
        if (qa.category === 5) continue;
        const gold = new Set(cleanEvidence(qa.evidence).map((d) => ids.get(d)).filter((x): x is EntityId => x !== undefined));
        if (gold.size === 0) continue;
        if (variant === '') questions++;
        for (const mode of modes as readonly Mode[]) {
          const ranked = await corpus.search(mode, qa.question, 10, now);
          const label = `${mode}${variant}`;
          if (!perMode.has(label)) perMode.set(label, new Map());
          const byCat = perMode.get(label) as Map<string, Scores>;
          for (const key of [`cat${qa.category}`, 'all']) {
            if (!byCat.has(key)) byCat.set(key, emptyScores());
            score(byCat.get(key) as Scores, ranked, gold);
          }
        }
      }
      await corpus.close();
    }
    process.stderr.write(`locomo: ${sample.sample_id} done (${entities.length} turns)\n`);
  }
  const names: Record<string, string> = { cat1: 'multi-hop', cat2: 'temporal', cat3: 'open-domain', cat4: 'single-hop', all: 'all 1-4' };
  const lines = [
    `LoCoMo, turn level, categories 1-4, one store per sample: ${questions} questions over ${turns} turns (embedding all turns took ${(embedMs / 1000).toFixed(1)} s).`,
    '',
    '| mode | category | n | recall@5 | recall@10 | hit@5 | MRR |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [mode, byCat] of perMode) {
    for (const key of ['cat1', 'cat2', 'cat3', 'cat4', 'all']) {
      const s = byCat.get(key);
      if (!s) continue;
      const m = mean(s);
      const row = `| ${mode} | ${names[key]} | ${s.n} | ${f3(m.recall5)} | ${f3(m.recall10)} | ${f3(m.hit5)} | ${f3(m.mrr)} |`;
      lines.push(key === 'all' ? row.replace(/\| ([^|]+) \|/, '| **$1** |') : row);
    }
  }
  return lines.join('\n');
}
