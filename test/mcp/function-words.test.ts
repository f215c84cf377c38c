/**
 * Function words of every language the model reads are no keyword evidence (issue 37), end to end
 * with the real model over a real MCP client. The French memory of five entities: "Que
 * dois-je faire avec les plantes ?" shares only "avec" with the dentist ("avec le docteur Martin")
 * and nothing with the garden, whose meaning it asks about. And an agent that writes back: German
 * notes appended to Spanish entities made every noted entity match every German question on "der",
 * "ist", "mit".
 */
import { describe, expect, it } from 'vitest';
import { harness, type Harness } from '../helpers/fixtures.js';

const FRENCH = [
  { name: 'Jardin', entityType: 'lieu', observations: ['Arroser les tomates et les rosiers du potager chaque soir en été.'] },
  {
    name: 'Dentiste',
    entityType: 'rendez-vous',
    observations: ['Rendez-vous mardi à 9 heures avec le docteur Martin pour un détartrage.'],
  },
  { name: 'Voiture', entityType: 'objet', observations: ['La révision de la voiture est prévue en mars chez le garagiste.'] },
  { name: 'Paul', entityType: 'personne', observations: ["Acheter un gâteau au chocolat pour l'anniversaire de Paul samedi."] },
  { name: 'Banque', entityType: 'organisation', observations: ['Appeler la banque pour renégocier le prêt immobilier.'] },
];

const SPANISH = [
  { name: 'Marisol', entityType: 'persona', observations: ['Cultiva tomates y pimientos en el huerto detrás de su casa.'] },
  { name: 'Gata', entityType: 'animal', observations: ['La gata Luna duerme todo el día en el sofá y le tiene miedo a la aspiradora.'] },
  { name: 'Coche', entityType: 'objeto', observations: ['El coche rojo necesita cambiar los neumáticos antes del invierno.'] },
  { name: 'Abuelo', entityType: 'persona', observations: ['Mi abuelo nació en un pueblo pequeño de Galicia en 1938.'] },
  { name: 'Biblioteca', entityType: 'lugar', observations: ['Hay que devolver los libros a la biblioteca antes del viernes.'] },
];

/** Notes an agent appends after opening an entity: the German question it was asked, as it wrote it. */
const GERMAN_NOTES: Record<string, string> = {
  Marisol: 'Notiz: Die Frage war, wer in der Familie das Gemüse im Garten anbaut, und die Antwort ist mit diesem Eintrag gefunden.',
  Coche: 'Notiz: Die Frage war, wann das rote Auto die neuen Reifen bekommen soll, und die Antwort ist mit diesem Eintrag gefunden.',
  Abuelo: 'Notiz: Die Frage war, wo der Großvater geboren ist, und die Antwort ist mit diesem Eintrag gefunden.',
  Biblioteca:
    'Notiz: Die Frage war, bis wann die Bücher in der Bibliothek zurückgegeben werden müssen, und die Antwort ist mit diesem Eintrag gefunden.',
};

async function names(h: Harness, tool: string, query: string): Promise<string[]> {
  const result = await h.ok<{ results: { name: string }[] }>(tool, { query, limit: 5 });
  return result.results.map((r) => r.name);
}

describe('function words of other languages are no evidence (issue 37, real model)', () => {
  for (const tool of ['hybrid_search', 'search_semantic'] as const) {
    it(`${tool}: "Que dois-je faire avec les plantes ?" finds the garden first, not the dentist that shares "avec"`, async () => {
      const h = await harness({ embedder: 'real' });
      try {
        await h.ok('create_entities', { entities: FRENCH });
        await h.service.drainEmbeddings();
        expect((await names(h, tool, 'Que dois-je faire avec les plantes ?'))[0]).toBe('Jardin');
        // The keyword leg alone has nothing to match: every word shared is a French function word.
        const keywordOnly = await h.ok<{ results: unknown[] }>('hybrid_search', {
          query: 'Que dois-je faire avec les plantes ?',
          search_modes: ['fts'],
        });
        expect(keywordOnly.results).toEqual([]);
      } finally {
        await h.close();
      }
    });

    it(`${tool}: German notes on Spanish entities do not make a German question match every noted entity`, async () => {
      const h = await harness({ embedder: 'real' });
      try {
        await h.ok('create_entities', { entities: SPANISH });
        await h.ok('add_observations', {
          observations: Object.entries(GERMAN_NOTES).map(([entityName, note]) => ({ entityName, contents: [note] })),
        });
        await h.service.drainEmbeddings();
        // Asked about the one entity without a note: "wo" and "der" matched the grandfather's note.
        expect((await names(h, tool, 'Wo schläft die Katze den ganzen Tag?'))[0]).toBe('Gata');
        const keywordOnly = await h.ok<{ results: unknown[] }>('hybrid_search', {
          query: 'Wer ist der Mann, der mit dem Hund im Park spazieren geht?',
          search_modes: ['fts'],
        });
        expect(keywordOnly.results).toEqual([]);
      } finally {
        await h.close();
      }
    });
  }
});
