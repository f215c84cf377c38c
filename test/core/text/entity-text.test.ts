import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  ASIDE_PULL,
  asidePull,
  buildEntityText,
  entityAsideText,
  hasAsides,
  MAX_ENTITY_TOKENS,
  mayNeedMoreVectors,
  observationLanguage,
  splitAsides,
  type TokenCounter,
} from '../../../src/core/text/entity-text.js';
import type { Entity, Relation } from '../../../src/core/types.js';

/** One token per whitespace-separated word ("|" counts as one). */
const words: TokenCounter = (t) => t.split(/\s+/).length;

const rel = (from: string, relationType: string, to: string): Relation => ({ from, to, relationType });

/** The observations between the header and the optional "Rel:" part. */
function observationsOf(text: string, header: string): string[] {
  const parts = text.split(' | ');
  expect(parts[0]).toBe(header);
  return parts.slice(1).filter((p) => !p.startsWith('Rel: '));
}

function expectInOriginalOrder(chosen: readonly string[], all: readonly string[]): void {
  const indices = chosen.map((o) => all.indexOf(o));
  expect(indices.every((i) => i >= 0)).toBe(true);
  expect([...indices].sort((a, b) => a - b)).toEqual(indices);
  expect(new Set(indices).size).toBe(indices.length);
}

describe('buildEntityText (spec/semantic-search.md "Entity Text Preparation")', () => {
  it('uses the spec budget of 480 tokens', () => {
    expect(MAX_ENTITY_TOKENS).toBe(480);
  });

  it('formats the spec example exactly when it fits', () => {
    const entity: Entity = {
      name: 'MCP Memory v2',
      entityType: 'Project',
      observations: ['8 tasks: T1 → T2 → T3', 'Pipeline: Architect → Builder → Auditor'],
    };
    const relations = [rel('MCP Memory v2', 'uses', 'FastMCP'), rel('MCP Memory v2', 'uses', 'SQLite')];
    expect(buildEntityText(entity, relations, words)).toBe(
      'MCP Memory v2 (Project) | 8 tasks: T1 → T2 → T3 | Pipeline: Architect → Builder → Auditor | Rel: uses → FastMCP; uses → SQLite',
    );
  });

  it('format: {name} ({entityType}) | obs1 | obs2 | Rel: type → target; type2 → target2', () => {
    const entity: Entity = { name: 'Limbic', entityType: 'Project', observations: ['obs1', 'obs2'] };
    expect(buildEntityText(entity, [rel('Limbic', 'type', 'target'), rel('Limbic', 'type2', 'target2')], words)).toBe(
      'Limbic (Project) | obs1 | obs2 | Rel: type → target; type2 → target2',
    );
  });

  it('omits the Rel part when there are no relations, and observations when there are none', () => {
    expect(buildEntityText({ name: 'Limbic', entityType: 'Project', observations: ['MCP server'] }, [], words)).toBe(
      'Limbic (Project) | MCP server',
    );
    expect(buildEntityText({ name: 'Limbic', entityType: 'Project', observations: [] }, [], words)).toBe('Limbic (Project)');
    expect(buildEntityText({ name: 'Limbic', entityType: 'Project', observations: [] }, [rel('Limbic', 'uses', 'SQLite')], words)).toBe(
      'Limbic (Project) | Rel: uses → SQLite',
    );
  });

  it('names the relation target, not its source', () => {
    const text = buildEntityText({ name: 'A', entityType: 'T', observations: [] }, [rel('SourceName', 'knows', 'TargetName')], words);
    expect(text).toContain('knows → TargetName');
    expect(text).not.toContain('SourceName');
  });

  describe('over budget: Head + Tail + Diversity', () => {
    const observations = Array.from({ length: 40 }, (_, i) => `note${i} about topic${i} with detail${i} and fact${i}`);
    const entity: Entity = { name: 'Big', entityType: 'Project', observations };
    const maxTokens = 80;
    const text = buildEntityText(entity, [], words, maxTokens);
    const chosen = observationsOf(text, 'Big (Project)');

    it('the full text would not fit, so this is the over-budget path', () => {
      expect(words(`Big (Project) | ${observations.join(' | ')}`)).toBeGreaterThan(maxTokens);
    });

    it('stays within the token budget', () => {
      expect(words(text)).toBeLessThanOrEqual(maxTokens);
    });

    it('keeps the first observation (head) and the last (tail)', () => {
      expect(chosen[0]).toBe(observations[0]);
      expect(chosen.at(-1)).toBe(observations.at(-1));
    });

    it('keeps the chosen observations in their original order', () => {
      expectInOriginalOrder(chosen, observations);
    });

    it('fills the budget with middle observations rather than stopping at head and tail', () => {
      expect(chosen.length).toBeGreaterThan(2);
      // Every observation costs 7 words + 1 separator: no room is left for another.
      expect(words(text) + 8).toBeGreaterThan(maxTokens);
    });
  });

  it('keeps the last observation (tail, the latest news) whenever the first and the last fit together', () => {
    // Five long observations of 200 words: header 2 + (200 + 1) × 2 = 404 ≤ 480, so head and tail fit.
    const observations = Array.from({ length: 5 }, (_, i) => Array.from({ length: 200 }, (_, j) => `o${i}w${j}`).join(' '));
    const text = buildEntityText({ name: 'E', entityType: 'T', observations }, [], words);
    expect(words(text)).toBeLessThanOrEqual(MAX_ENTITY_TOKENS);
    const chosen = observationsOf(text, 'E (T)');
    expect(chosen[0]).toBe(observations[0]);
    expect(chosen.at(-1)).toBe(observations[4]);
  });

  describe('diversity: a new topic beats a near-duplicate of what is already kept', () => {
    const head = 'alpha beta gamma delta';
    const tail = 'omega psi chi phi';
    const nearDuplicate = 'alpha beta gamma delta epsilon';
    const diverse = 'sqlite vectors embeddings fusion ranking';
    // Header 2 + head 5 + tail 5 + one middle 6 fit in 22; both middles (24) do not.
    const maxTokens = 22;

    it.each([
      ['near-duplicate first', [head, nearDuplicate, diverse, tail]],
      ['diverse first', [head, diverse, nearDuplicate, tail]],
    ])('%s', (_label, observations) => {
      const entity: Entity = { name: 'E', entityType: 'T', observations };
      expect(words(`E (T) | ${observations.join(' | ')}`)).toBeGreaterThan(maxTokens);
      const text = buildEntityText(entity, [], words, maxTokens);
      expect(text).toBe(`E (T) | ${head} | ${diverse} | ${tail}`);
      expect(words(text)).toBeLessThanOrEqual(maxTokens);
    });
  });

  it('keeps relations within a bounded share and the text within budget', () => {
    const relations = Array.from({ length: 30 }, (_, i) => rel('Hub', 'links', `Target${i}`));
    const observations = Array.from({ length: 20 }, (_, i) => `observation number ${i} text`);
    const maxTokens = 60;
    const text = buildEntityText({ name: 'Hub', entityType: 'Node', observations }, relations, words, maxTokens);
    expect(words(text)).toBeLessThanOrEqual(maxTokens);
    const relPart = text.split(' | ').at(-1) ?? '';
    expect(relPart.startsWith('Rel: links → Target0')).toBe(true);
    expect(words(relPart)).toBeLessThanOrEqual(maxTokens / 4);
    expect(observationsOf(text, 'Hub (Node)')[0]).toBe(observations[0]);
  });

  it('works with a character counter and the default 480 budget', () => {
    const chars: TokenCounter = (t) => t.length;
    const observations = Array.from({ length: 100 }, (_, i) => `Observation ${i}: something distinct happened on day ${i}.`);
    const text = buildEntityText({ name: 'Diary', entityType: 'Log', observations }, [], chars);
    expect(text.length).toBeLessThanOrEqual(MAX_ENTITY_TOKENS);
    const chosen = observationsOf(text, 'Diary (Log)');
    expect(chosen[0]).toBe(observations[0]);
    expect(chosen.at(-1)).toBe(observations.at(-1));
    expectInOriginalOrder(chosen, observations);
  });

  it('property: within budget, header first, observations an ordered subset; unchanged when it fits (asides apart)', () => {
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    const observation = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => ws.join(' '));
    fc.assert(
      fc.property(
        word,
        word,
        fc.uniqueArray(observation, { maxLength: 40 }),
        fc.array(fc.tuple(word, word), { maxLength: 10 }),
        fc.integer({ min: 12, max: 200 }),
        (name, entityType, observations, rels, maxTokens) => {
          const entity: Entity = { name, entityType, observations };
          const relations = rels.map(([type, to]) => rel(name, type, to));
          const text = buildEntityText(entity, relations, words, maxTokens);
          const header = `${name} (${entityType})`;
          expect(words(text)).toBeLessThanOrEqual(maxTokens);
          expectInOriginalOrder(observationsOf(text, header), observations);
          const relText = relations.length === 0 ? [] : [`Rel: ${relations.map((r) => `${r.relationType} → ${r.to}`).join('; ')}`];
          // Random words may read as two languages (asides, left out: tested below).
          const full = [header, ...splitAsides(observations).own, ...relText].join(' | ');
          if (words(full) <= maxTokens) expect(text).toBe(full);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('asides: observations in another language than the entity’s (issue 37, notes written back)', () => {
  const spanish = 'Cultiva tomates y pimientos en el huerto detrás de su casa.';
  const german = 'Der Nutzer hat mich gefragt, wer in der Familie das Gemüse im Garten anbaut.';
  const english = 'She grows tomatoes and peppers in the garden behind her house.';

  it('reads the language of an observation, and nothing from words that tell none', () => {
    expect(observationLanguage(german)).toBe('deu');
    expect(observationLanguage(spanish)).toBe('spa');
    expect(observationLanguage(english)).toBe('eng');
    expect(observationLanguage('Madrid')).toBeUndefined();
    expect(observationLanguage('born 1815')).toBeUndefined();
  });

  it('splits off the observations in another language than the first one that tells its language', () => {
    expect(splitAsides(['Marisol', spanish, german, 'Tiene tres hijos y vive con su madre.'])).toEqual({
      own: ['Marisol', spanish, 'Tiene tres hijos y vive con su madre.'],
      asides: [german],
    });
    expect(splitAsides([english, german, spanish])).toEqual({ own: [english], asides: [german, spanish] });
    expect(hasAsides([spanish, german])).toBe(true);
    expect(hasAsides([spanish, 'Tiene tres hijos y vive con su madre.'])).toBe(false);
  });

  it('a note in another language does not become the language of an entity whose own text is a few words', () => {
    // The entity's first observation is too short to tell its language by observationLanguage's
    // rule (one function word), the notes are long: before, the first note set the entity's
    // language, so every German note went into its vector and a later English one was the aside.
    const note = (q: string) => `Der Nutzer hat mich gefragt: «${q}». Die Antwort steht in diesem Absatz, den ich mir merken will.`;
    const notes = [note('wer gibt am Wochenende die Yogastunde?'), note('¿quién da la clase de estiramientos del fin de semana?')];
    expect(splitAsides(['teaches yoga on Saturday mornings', ...notes])).toEqual({
      own: ['teaches yoga on Saturday mornings'],
      asides: notes,
    });
    expect(splitAsides(['they need water twice a week', ...notes, english])).toEqual({
      own: ['they need water twice a week', english],
      asides: notes,
    });
    expect(splitAsides(['necesitan agua dos veces por semana', ...notes])).toEqual({
      own: ['necesitan agua dos veces por semana'],
      asides: notes,
    });
    // A first observation of no language's words ("Madrid") still leaves it to the first that tells one.
    expect(splitAsides(['Madrid', german, spanish])).toEqual({ own: ['Madrid', german], asides: [spanish] });
  });

  it('an aside brings its entity at most ASIDE_PULL nearer than its own vector, and never farther', () => {
    expect(asidePull(0.1, 0.3)).toBeCloseTo(0.3 - ASIDE_PULL, 12);
    expect(asidePull(0.29, 0.3)).toBe(0.29);
    expect(asidePull(0.35, 0.3)).toBe(0.3);
  });

  it("leaves asides out of the entity's text, which is unchanged for an entity in one language", () => {
    const entity: Entity = { name: 'Marisol', entityType: 'persona', observations: [spanish, german] };
    expect(buildEntityText(entity, [], words)).toBe(`Marisol (persona) | ${spanish}`);
    const plain: Entity = { name: 'Marisol', entityType: 'persona', observations: [spanish, 'Tiene tres hijos y vive con su madre.'] };
    expect(buildEntityText(plain, [], words)).toBe(`Marisol (persona) | ${spanish} | Tiene tres hijos y vive con su madre.`);
    // An aside's own text: the header, the aside, then the entity's own observations (the model truncates).
    expect(entityAsideText(entity, [spanish], german)).toBe(`Marisol (persona) | ${german} | ${spanish}`);
  });

  it('a copy of a memory leaves an entity with asides queued, to make their vectors there', () => {
    expect(mayNeedMoreVectors([spanish, german])).toBe(true);
    expect(mayNeedMoreVectors([spanish, 'Tiene tres hijos y vive con su madre.'])).toBe(false);
  });
});
