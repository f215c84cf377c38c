/**
 * Notes written back in another language than the memory's stay out of the noted entity's vector
 * (issue 37's remaining hole), end to end with the real model over a real MCP client. An agent
 * opens an entity of a Spanish memory and appends German notes holding what it was asked: before,
 * the entity's single vector (its whole text) moved toward "German question", so German questions
 * about the other entities found the noted one first. Now the notes are asides: they have vectors
 * of their own, a little handicapped, and a question about a note's own content still finds it.
 */
import { describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

const SPANISH = [
  { name: 'Marisol', entityType: 'persona', observations: ['Cultiva tomates y pimientos en el huerto detrás de su casa.'] },
  { name: 'Gata', entityType: 'animal', observations: ['La gata Luna duerme todo el día en el sofá y le tiene miedo a la aspiradora.'] },
  { name: 'Coche', entityType: 'objeto', observations: ['El coche rojo necesita cambiar los neumáticos antes del invierno.'] },
  { name: 'Abuelo', entityType: 'persona', observations: ['Mi abuelo nació en un pueblo pequeño de Galicia en 1938.'] },
  { name: 'Biblioteca', entityType: 'lugar', observations: ['Hay que devolver los libros a la biblioteca antes del viernes.'] },
  { name: 'Dentista', entityType: 'cita', observations: ['La cita con la dentista es el martes a las nueve de la mañana.'] },
];

/** What the agent was asked about the garden, in German; it noted each question on the entity it opened. */
const ASKED = [
  'wann die Tomaten reif sind',
  'wer sich um die Pflanzen kümmert',
  'welches Gemüse es im Sommer gibt',
  'wo die Paprika wachsen',
  'was Marisol am Wochenende macht',
];
const NOTES = ASKED.map(
  (q) =>
    `Der Nutzer hat mich gefragt: «${q}». Die Antwort steht in diesem Eintrag, der für das Thema wichtig ist und den ich mir merken will.`,
);
/** A note that holds a fact of its own (pumpkins and courgettes, in spring), in German too. */
const FACT = 'Notiz: Der Nutzer möchte im Frühling mit Marisol zusammen Kürbisse und Zucchini säen.';

/**
 * German questions about the other entities, each with the entity whose own text answers it (as on
 * the memory without notes). Before, the first two found the noted garden first.
 */
const QUESTIONS: [string, string][] = [
  ['Ich habe eine Frage: wo schläft die Katze?', 'Gata'],
  ['Ich habe eine Frage: wann ist der Termin beim Zahnarzt?', 'Dentista'],
  ['Wo schläft die Katze den ganzen Tag?', 'Gata'],
  ['Wann braucht das rote Auto neue Reifen?', 'Coche'],
  ['Wo ist mein Großvater geboren?', 'Abuelo'],
  ['Sag mir bitte, was du über die Frage weißt: Wann muss ich die Bücher zurückgeben?', 'Biblioteca'],
  ['Sag mir bitte, was du über die Frage weißt: Wann ist der Zahnarzttermin?', 'Dentista'],
];

/**
 * A memory whose entities are a few words each, in English, as most personal memories are: too
 * few for the words to tell their language by the rule an observation needs, so before, the first
 * German note appended to one set its language and every German note went into its vector.
 */
const SHORT_ENGLISH = [
  { name: 'Ferns', entityType: 'note', observations: ['they need water twice a week'] },
  { name: 'Toby', entityType: 'pet', observations: ['the dog, he needs his pills every morning'] },
  { name: 'Car', entityType: 'thing', observations: ['it is due for its service at 60,000 kilometres'] },
  { name: 'Book club', entityType: 'event', observations: ['meets the first Friday of every month at the library'] },
  { name: 'Javier', entityType: 'person', observations: ['works as a nurse at the hospital'] },
  { name: 'Clara', entityType: 'person', observations: ['teaches yoga on Saturday mornings'] },
];
/** What the agent was asked about Clara, in German framing, and noted on her. */
const ASKED_ABOUT_CLARA = [
  'who gives the weekend stretching class?',
  'wer gibt am Samstag die Yogastunde?',
  'wann ist die Yogastunde?',
  '¿quién da la clase de estiramientos del fin de semana?',
];
const CLARA_NOTES = ASKED_ABOUT_CLARA.map(
  (q) =>
    `Der Nutzer hat mich gefragt: «${q}». Die Antwort steht in diesem Absatz, der für das Thema wichtig ist und den ich mir merken will.`,
);
const SHORT_QUESTIONS: [string, string][] = [
  ['Sag mir bitte, was du über die Frage weißt: which animal takes medicine?', 'Toby'],
  ['Sag mir bitte, was du über die Frage weißt: when does the car need maintenance?', 'Car'],
  ['Sag mir bitte, was du über die Frage weißt: when do we get together to talk about novels?', 'Book club'],
  ['Sag mir bitte, was du über die Frage weißt: who has a job in health care?', 'Javier'],
  ['Wie oft muss ich die Pflanzen gießen?', 'Ferns'],
  ['Welches Tier bekommt jeden Morgen Tabletten?', 'Toby'],
  ['Wer arbeitet im Krankenhaus?', 'Javier'],
];

async function first(h: Harness, tool: string, query: string): Promise<string | undefined> {
  const result = await h.ok<{ results: { name: string }[] }>(tool, { query, limit: 5 });
  return result.results[0]?.name;
}

describe('notes in another language than the memory’s (issue 37, real model)', () => {
  for (const tool of ['search_semantic', 'hybrid_search'] as const) {
    it(`${tool}: German notes piled on one Spanish entity leave German questions about the others to those`, async () => {
      const h = await harness({ embedder: 'real' });
      try {
        await h.ok('create_entities', { entities: SPANISH });
        await h.ok('add_observations', { observations: [{ entityName: 'Marisol', contents: NOTES }] });
        await h.service.drainEmbeddings();
        const found = [];
        for (const [question] of QUESTIONS) found.push(await first(h, tool, question));
        expect(found).toEqual(QUESTIONS.map(([, answer]) => answer));
      } finally {
        await h.close();
      }
    });

    it(`${tool}: German notes on an entity of a few English words leave German questions about the others to those`, async () => {
      const h = await harness({ embedder: 'real' });
      try {
        await h.ok('create_entities', { entities: SHORT_ENGLISH });
        await h.ok('add_observations', { observations: [{ entityName: 'Clara', contents: CLARA_NOTES }] });
        await h.service.drainEmbeddings();
        const found = [];
        for (const [question] of SHORT_QUESTIONS) found.push(await first(h, tool, question));
        expect(found).toEqual(SHORT_QUESTIONS.map(([, answer]) => answer));
        // The notes still find her.
        expect(await first(h, tool, 'Wer gibt am Samstag die Yogastunde?')).toBe('Clara');
      } finally {
        await h.close();
      }
    });

    it(`${tool}: a note's own content still finds its entity`, async () => {
      const h = await harness({ embedder: 'real' });
      try {
        await h.ok('create_entities', { entities: SPANISH });
        await h.ok('add_observations', { observations: [{ entityName: 'Marisol', contents: [...NOTES, FACT] }] });
        await h.service.drainEmbeddings();
        // Only the last note says it: pumpkins and courgettes, in spring.
        expect(await first(h, tool, 'Mit wem will ich im Frühling Kürbisse säen?')).toBe('Marisol');
        expect(await first(h, tool, '¿Con quién quiero sembrar calabazas en primavera?')).toBe('Marisol');
      } finally {
        await h.close();
      }
    });
  }
});
