import { describe, expect, it } from 'vitest';
import { isStopword } from '../../../src/core/text/stopwords.js';

describe('isStopword', () => {
  it('knows English and Spanish function words in any case', () => {
    for (const w of ['the', 'The', 'WHO', 'and', 'el', 'La', 'que', 'qué', 'por']) expect(isStopword(w)).toBe(true);
  });
  it('keeps words that carry meaning', () => {
    for (const w of ['kettle', 'program', 'tetera', 'programa', 'Ada', 'sqlite', '']) expect(isStopword(w)).toBe(false);
  });
});
