/**
 * The small-memory suite (issue 18): memories of 5, 10, 20 and 50 entities, in English, in Spanish
 * and mixed (each entity in one language, by coin), drawn from small-memory-facts.ts by a seeded
 * PRNG; in each, up to five entities are asked about in both languages, at search_semantic's default
 * limit of 10. Groups are language directions: question language → the language of the entity that
 * answers it. Memories of the first repetition are half A, of the second half B.
 */
import { rng } from '../latency/generate.js';
import type { EntityId, NewEntity } from '../../src/core/types.js';
import { cachedEmbedder } from './embed-cache.js';
import { Corpus, loadModel, MODES, type Probe } from './harness.js';
import { FACTS } from './small-memory-facts.js';
import { Tally, type Half } from './tally.js';

const SEED = 18;
const SIZES = [5, 10, 20, 50] as const;
const LANGUAGES = ['en', 'es', 'mixed'] as const;
const TARGETS = 5;
const LIMIT = 10;
/** Candidates the fusion study reads per leg: every entity of the largest memory. */
const STUDY_DEPTH = 150;
export const SMALL_GROUPS = ['en→en', 'es→es', 'en→es', 'es→en', 'all'] as const;

type Lang = 'en' | 'es';

interface Memory {
  readonly half: Half;
  readonly label: string;
  readonly entities: NewEntity[];
  readonly questions: { readonly text: string; readonly answer: string; readonly group: string }[];
}

/** Fisher-Yates with the suite's PRNG: the same memories on every run and machine. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function smallMemories(): Memory[] {
  const memories: Memory[] = [];
  for (const [rep, half] of [
    [0, 'A'],
    [1, 'B'],
  ] as const) {
    for (const size of SIZES) {
      for (const language of LANGUAGES) {
        const random = rng(SEED * 1000 + memories.length);
        const picked = shuffled(FACTS, random).slice(0, size);
        const langs: Lang[] = picked.map(() => (language === 'mixed' ? (random() < 0.5 ? 'en' : 'es') : language));
        const entities = picked.map((f, i): NewEntity => {
          const side = f[langs[i] ?? 'en'];
          return { name: side.name, entityType: f.type, observations: side.obs };
        });
        const questions = picked
          .slice(0, TARGETS)
          .flatMap((f, i) =>
            (['en', 'es'] as const).map((q) => ({ text: f[q].q, answer: entities[i]?.name ?? '', group: `${q}→${langs[i]}` })),
          );
        memories.push({ half, label: `${size} ${language} #${rep}`, entities, questions });
      }
    }
  }
  return memories;
}

export async function runSmallMemory(probes?: Probe[]): Promise<{ report: string; tally: Tally }> {
  const embedder = cachedEmbedder(await loadModel());
  const now = Date.UTC(2026, 0, 1);
  const tally = new Tally();
  const started = performance.now();
  let questions = 0;
  const memories = smallMemories();
  for (const memory of memories) {
    const corpus = new Corpus(embedder);
    await corpus.load(memory.entities, now);
    const ids = await corpus.ids(memory.entities.map((e) => e.name));
    for (const q of memory.questions) {
      const gold = new Set([ids.get(q.answer) as EntityId]);
      questions++;
      for (const mode of MODES) tally.add(mode, memory.half, [q.group, 'all'], await corpus.search(mode, q.text, LIMIT, now), gold);
      if (probes !== undefined)
        probes.push({ half: memory.half, group: q.group, gold: [...gold], limit: LIMIT, legs: await corpus.legs(q.text, STUDY_DEPTH) });
    }
    await corpus.close();
  }
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`small memory: ${memories.length} memories, ${questions} questions in ${seconds.toFixed(1)} s\n`);
  const metrics = ['hit1', 'mrr', 'recall5'] as const;
  const report = [
    `${memories.length} memories (${SIZES.join(', ')} entities × English, Spanish, mixed × 2 draws, seed ${SEED}), ${questions} questions`,
    `(${TARGETS} entities per memory asked about in both languages), limit ${LIMIT}; ${seconds.toFixed(1)} s in all. Groups: question language → the answer's language.`,
    '',
    tally.table('A', SMALL_GROUPS, metrics),
    '',
    tally.table('B', SMALL_GROUPS, metrics),
  ].join('\n');
  return { report, tally };
}
