import { describe, expect, it } from 'vitest';
import { contentWords, foldAccents, isStopword } from '../../../src/core/text/stopwords.js';

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
    for (const w of ['kettle', 'program', 'tetera', 'programa', 'abuelo', 'Ada', 'sqlite', '']) expect(isStopword(w)).toBe(false);
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
