import { describe, expect, it } from 'vitest';
import { queryWords } from '../../../src/core/text/fts-query.js';
import { contentWords, foldAccents, isStopword, readLanguage } from '../../../src/core/text/stopwords.js';

describe('isStopword', () => {
  it('knows English and Spanish function words in any case', () => {
    for (const w of ['the', 'The', 'WHO', 'and', 'el', 'La', 'que', 'qué', 'por']) expect(isStopword(w)).toBe(true);
  });
  it('knows the forms of ser, estar, haber and tener, which the old 59-word list lacked', () => {
    for (const w of ['es', 'Es', 'son', 'fue', 'está', 'había', 'tiene', 'hubiera']) expect(isStopword(w)).toBe(true);
  });
  it('compares accents folded, as the keyword index does', () => {
    expect(foldAccents('Dónde')).toBe('donde');
    for (const w of ['dónde', 'cuándo', 'cómo', 'quién', 'Esta', 'esta']) expect(isStopword(w)).toBe(true);
  });
  it('knows the question words the lists lack (issue 33): when, why, whom, whose, does; cuáles, cuántos, adónde', () => {
    for (const w of ['when', 'When', 'why', 'whom', 'whose', 'whenever', 'does', 'cuáles', 'cuántos', 'Cuánta', 'adónde'])
      expect(isStopword(w)).toBe(true);
    expect(contentWords(['when', 'is', 'my', 'grandmother', 'birthday'])).toEqual(['grandmother', 'birthday']);
    expect(contentWords(['cuántos', 'años', 'tiene', 'la', 'abuela'])).toEqual(['años', 'abuela']);
  });
  it('keeps words that carry meaning', () => {
    // "ada" is Indonesian for "there is": a stopword of that language, not of Spanish.
    for (const w of ['kettle', 'program', 'tetera', 'programa', 'abuelo', 'Ada', 'sqlite', '']) expect(isStopword(w, 'spa')).toBe(false);
    for (const w of ['kettle', 'program', 'tetera', 'programa', 'abuelo', 'sqlite', '']) expect(isStopword(w)).toBe(false);
  });
});

describe('contentWords', () => {
  it('drops English stopwords from English text, keeping the order', () => {
    expect(contentWords(['who', 'wrote', 'the', 'first', 'program'])).toEqual(['wrote', 'first', 'program']);
  });
  it('drops Spanish stopwords from text that reads as Spanish', () => {
    expect(contentWords(['de', 'dónde', 'es', 'mi', 'abuelo'])).toEqual(['abuelo']);
    expect(contentWords(['quién', 'escribió', 'el', 'primer', 'programa'])).toEqual(['escribió', 'primer', 'programa']);
  });
  it('keeps English words that are Spanish stopwords when the text reads as English', () => {
    expect(contentWords(['my', 'son', 'was', 'born', 'in', 'Oslo'])).toEqual(['son', 'born', 'Oslo']);
    expect(contentWords(['the', 'sea', 'was', 'calm', 'that', 'era'])).toEqual(['sea', 'calm', 'era']);
  });
  it('returns nothing for stopwords alone, in either language', () => {
    expect(contentWords(['the', 'of', 'and'])).toEqual([]);
    expect(contentWords(['es', 'de', 'la'])).toEqual([]);
    expect(contentWords([])).toEqual([]);
  });
});

/** The content words of a text as the keyword leg splits it (queryWords: distinct words, clitics gone). */
const content = (text: string): string[] => contentWords(queryWords(text));

describe('function words of every language the model reads (issue 37)', () => {
  it('drops German function words from German text, question words too', () => {
    expect(content('Wo ist der Garten meiner Großmutter?')).toEqual(['Garten', 'Großmutter']);
    expect(content('Was soll ich mit den Pflanzen machen?')).toEqual(['Pflanzen']);
    expect(content('Wann hat der Zahnarzt Termin?')).toEqual(['Zahnarzt', 'Termin']);
  });
  it('drops French function words from French text (the issue: "avec", "les")', () => {
    expect(content('Que dois-je faire avec les plantes ?')).toEqual(['dois', 'plantes']);
    expect(content('Où est le jardin de ma grand-mère ?')).toEqual(['jardin', 'grand', 'mère']);
  });
  it('drops Italian function words from Italian text', () => {
    expect(content('Dove si trova il giardino della nonna?')).toEqual(['trova', 'giardino', 'nonna']);
    expect(content('Cosa devo fare con le piante?')).toEqual(['devo', 'fare', 'piante']);
  });
  it('drops Portuguese function words from Portuguese text', () => {
    expect(content('Onde fica a casa do meu avô?')).toEqual(['fica', 'casa', 'avô']);
    expect(content('O que devo fazer com as plantas?')).toEqual(['devo', 'fazer', 'plantas']);
  });
  it('drops Dutch function words from Dutch text', () => {
    expect(content('Waar is de tuin van mijn oma?')).toEqual(['tuin', 'oma']);
    expect(content('Wat moet ik met de planten doen?')).toEqual(['planten']);
  });
  it('drops the function words of languages outside Snowball when a word is written outside ASCII', () => {
    expect(content('Gdzie są moje klucze?')).toEqual(['klucze']);
    expect(content('Где мой сад?')).toEqual(['сад']);
  });
  it('keeps English content words that are function words elsewhere, in English text', () => {
    expect(content("my son's birthday")).toEqual(['son', 'birthday']);
    expect(content('the die was cast')).toEqual(['die', 'cast']);
    expect(content('the bin is fast')).toEqual(['bin', 'fast']);
    expect(content('he dies at the end of the war')).toEqual(['dies', 'end', 'war']);
    expect(content('will the man wear a hat')).toEqual(['will', 'man', 'wear', 'hat']);
    expect(content('the sea was calm that era, a sin')).toEqual(['sea', 'calm', 'era', 'sin']);
    // Breton's and Esperanto's lists hold English words; their languages need a word outside ASCII.
    expect(content('just stop the war')).toEqual(['just', 'stop', 'war']);
    expect(content('super ok')).toEqual(['super', 'ok']);
  });
  it('reads no language from one function word that is also an English word; one that is none is enough', () => {
    expect(content('die hard')).toEqual(['die', 'hard']);
    expect(content('sin city')).toEqual(['sin', 'city']);
    expect(content('no parking zone')).toEqual(['no', 'parking', 'zone']);
    expect(content('la abuela')).toEqual(['abuela']);
    expect(content('factura pagada con retraso')).toEqual(['factura', 'pagada', 'retraso']);
    expect(content('der Garten')).toEqual(['Garten']);
    // One written outside ASCII is no English word.
    expect(content('¿Qué cantó Lady Gaga?')).toEqual(['cantó', 'Lady', 'Gaga']);
  });
  it('an English question about a Spanish name keeps the name whole; a Spanish one about an English name reads as Spanish', () => {
    expect(content('what did the dentist say about El Niño de la Calle')).toEqual(['dentist', 'say', 'El', 'Niño', 'de', 'la', 'Calle']);
    expect(content('¿Qué metro cubre gran parte de Tyne and Wear?')).toEqual(['metro', 'cubre', 'gran', 'parte', 'Tyne', 'Wear']);
  });
  it('reads Spanish over its neighbours when they tie or the accents say so, so a Spanish content word stays', () => {
    // "dos" is Portuguese for "of the" and Spanish for "two"; "qué" is written as only Spanish writes it.
    expect(readLanguage(queryWords('¿Qué ley sudafricana reconoce dos tipos de escuelas?'))).toBe('spa');
    expect(content('¿Qué ley sudafricana reconoce dos tipos de escuelas?')).toContain('dos');
    expect(readLanguage(queryWords('de dónde es mi abuelo'))).toBe('spa');
  });
});
