import { describe, expect, it } from 'vitest';
import { foldAccents, planNfcRenames, relationEnd, substringTest, toNfc } from '../../../src/core/text/fold.js';

/** The definition, without fold.ts' shortcuts: lower-cased, decomposed, combining marks removed. */
const general = (text: string): string => text.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');

describe('foldAccents (issue 25)', () => {
  it('folds case and accents, composed or decomposed', () => {
    expect(foldAccents('Ana García')).toBe('ana garcia');
    expect(foldAccents('GARCI\u0301A')).toBe('garcia');
    expect(foldAccents('İstanbul')).toBe('istanbul');
    expect(foldAccents('Ñandú, Zoë, Straße')).toBe('nandu, zoe, straße');
    expect(foldAccents('plain ascii')).toBe('plain ascii');
  });

  it('gives the general definition for every character of the Basic Multilingual Plane, alone and among others', () => {
    for (let c = 0; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const char = String.fromCharCode(c);
      for (const text of [char, `É${char}x\u0301`, `a${char}Ωb`])
        if (foldAccents(text) !== general(text)) expect(foldAccents(text)).toBe(general(text));
    }
  });
});

describe('substringTest', () => {
  it('matches accents either way, and everything the official lower-case test matches', () => {
    const t = substringTest('Garcia');
    expect(['Ana García', 'JOSE GARCIA', 'garci\u0301a'].map(t.matches)).toEqual([true, true, true]);
    expect(substringTest('garcía').matches('GARCIA')).toBe(true);
    expect(substringTest('xyz').matches('Ana García')).toBe(false);
    expect(substringTest('').matches('anything')).toBe(true);
  });

  it('compares a query of combining marks alone as written, lower-cased, instead of matching everything', () => {
    const t = substringTest('\u0301');
    expect(t.folded).toBe(false);
    expect(t.matches('Cafe\u0301')).toBe(true);
    expect(t.matches('Café')).toBe(false);
  });
});

describe('NFC names', () => {
  it('toNfc composes, and leaves ASCII and NFC text as it is', () => {
    expect(toNfc('Cafe\u0301')).toBe('Café');
    expect(toNfc('Café')).toBe('Café');
    expect(toNfc('plain')).toBe('plain');
  });

  it('planNfcRenames renames what is not NFC, keeping apart two entities that differ only in form', () => {
    const renames = planNfcRenames(['Cafe\u0301', 'Café', 'Nin\u0303o', 'Plain', 'Café (2)', 'Caf\u0065\u0301']);
    expect(renames).toEqual(
      new Map([
        ['Cafe\u0301', 'Café (3)'],
        ['Nin\u0303o', 'Niño'],
      ]),
    );
    expect(relationEnd(renames, 'Cafe\u0301')).toBe('Café (3)');
    expect(relationEnd(renames, 'Gho\u0301st')).toBe('Ghóst');
    expect(relationEnd(renames, 'Plain')).toBe('Plain');
  });
});
