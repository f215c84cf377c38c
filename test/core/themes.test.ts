/** Issue 33: a consolidation theme reads as words from the notes, not as somebody's name ("Usuario Hermana"). */
import { describe, expect, it } from 'vitest';
import { themes } from '../../src/core/maintenance/themes.js';

const SISTERS = [
  'la hermana del usuario vive en Valencia',
  'la hermana mayor del usuario es médica',
  'otra hermana del usuario estudia música',
];
const OTHERS = [
  'el usuario conduce un coche eléctrico',
  'el usuario toca el piano los domingos',
  'mañana lloverá en Madrid',
  'leyendo una novela de misterio',
];

describe('themes', () => {
  it('leaves out a word most of the memory uses ("usuario") and writes the others in lower case', () => {
    expect(themes([SISTERS], [...SISTERS, ...OTHERS])).toEqual([{ words: ['hermana'], name: 'hermana' }]);
  });

  it("keeps a word's capital only where the notes always write it so mid-sentence", () => {
    const trips = [
      'We flew to Lisbon for the conference',
      'Lisbon had great food at the conference',
      'Took the train around Lisbon after the conference',
    ];
    const corpus = [...trips, 'tomatoes grow in the garden', 'the invoice was paid', 'basil needs water'];
    expect(themes([trips], corpus)[0]?.words).toEqual(['conference', 'Lisbon']);
    // A word written in lower case somewhere mid-sentence is no name.
    expect(themes([['the Garden of Eden is a garden', 'our garden needs water']], ['x', 'y', 'z', 'w'])[0]?.words).toContain('garden');
  });

  it('names only what the members share, never one name twice, and "theme N" when nothing is shared', () => {
    const corpus = ['red apples', 'green apples', 'blue whales', 'grey whales', 'lone star', 'dark moon'];
    const named = themes(
      [
        ['red apples', 'green apples'],
        ['blue whales', 'grey whales'],
        ['lone star', 'dark moon'],
      ],
      corpus,
    );
    expect(named.map((t) => t.name)).toEqual(['apples', 'whales', 'theme 3']);
    expect(named[2]?.words).toEqual([]);
    const twice = themes(
      [
        ['red apples', 'green apples'],
        ['ripe apples', 'sour apples'],
      ],
      ['red apples', 'green apples', 'ripe apples', 'sour apples', 'a', 'b', 'c', 'd', 'e'],
    );
    expect(twice.map((t) => t.name)).toEqual(['apples', 'apples (2)']);
    expect(themes([], [])).toEqual([]);
  });
});
