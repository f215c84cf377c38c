import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  coOccurrenceLine,
  entityLine,
  formatMemoryFile,
  limbicEntityLine,
  limbicRelationLine,
  parseMemoryLine,
  rankingLine,
  relationLine,
  type ExportEntity,
  type ParsedLine,
} from '../../src/core/jsonl.js';
import type { Entity, KnowledgeGraph, Relation } from '../../src/core/types.js';

function expectError(parsed: ParsedLine): void {
  expect(parsed.kind).toBe('error');
  if (parsed.kind === 'error') expect(parsed.reason.length).toBeGreaterThan(0);
}

describe('parseMemoryLine (compat/official-memory-server.md §1)', () => {
  describe('the two official line types', () => {
    it('entity line', () => {
      expect(
        parseMemoryLine('{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish"]}'),
      ).toEqual({
        kind: 'entity',
        entity: { name: 'John_Smith', entityType: 'person', observations: ['Speaks fluent Spanish'] },
      });
    });

    it('relation line', () => {
      expect(parseMemoryLine('{"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}')).toEqual({
        kind: 'relation',
        relation: { from: 'John_Smith', to: 'Anthropic', relationType: 'works_at' },
      });
    });

    it('drops unknown extra keys, like the official loader', () => {
      const parsed = parseMemoryLine('{"type":"entity","name":"x","entityType":"t","observations":[],"extra":1,"strength":0.5}');
      expect(parsed).toEqual({ kind: 'entity', entity: { name: 'x', entityType: 't', observations: [] } });
    });

    it('tolerates surrounding whitespace and a CR from CRLF files', () => {
      expect(parseMemoryLine('  {"type":"relation","from":"a","to":"b","relationType":"r"}\r').kind).toBe('relation');
    });
  });

  describe('variants seen in the wild (basic-memory importer)', () => {
    it('entityName as the name', () => {
      const parsed = parseMemoryLine('{"type":"entity","entityName":"Alice","entityType":"person","observations":[]}');
      expect(parsed).toEqual({ kind: 'entity', entity: { name: 'Alice', entityType: 'person', observations: [] } });
    });

    it('id as the name', () => {
      const parsed = parseMemoryLine('{"type":"entity","id":"alice-1","entityType":"person","observations":["o"]}');
      expect(parsed).toEqual({ kind: 'entity', entity: { name: 'alice-1', entityType: 'person', observations: ['o'] } });
    });

    it('name wins over entityName and id when several are present', () => {
      const parsed = parseMemoryLine('{"type":"entity","id":"i","entityName":"e","name":"n","entityType":"t","observations":[]}');
      expect(parsed.kind === 'entity' && parsed.entity.name).toBe('n');
    });

    it('from_id / to_id / relation_type', () => {
      expect(parseMemoryLine('{"type":"relation","from_id":"a","to_id":"b","relation_type":"knows"}')).toEqual({
        kind: 'relation',
        relation: { from: 'a', to: 'b', relationType: 'knows' },
      });
    });

    it('mixes official and variant keys', () => {
      expect(parseMemoryLine('{"type":"relation","from":"a","to_id":"b","relation_type":"knows"}')).toEqual({
        kind: 'relation',
        relation: { from: 'a', to: 'b', relationType: 'knows' },
      });
    });

    it('entityType falls back to type when type is not "entity"', () => {
      const parsed = parseMemoryLine('{"type":"person","name":"Bob","observations":["likes tea"]}');
      expect(parsed).toEqual({ kind: 'entity', entity: { name: 'Bob', entityType: 'person', observations: ['likes tea'] } });
    });

    it('entityType falls back to "entity" when there is no usable type, and says so (issue 35 item 13)', () => {
      expect(parseMemoryLine('{"type":"entity","name":"Bob","observations":[]}')).toEqual({
        kind: 'entity',
        entity: { name: 'Bob', entityType: 'entity', observations: [] },
        notes: ['type missing: stored as "entity"'],
      });
      expect(parseMemoryLine('{"name":"Bob","observations":[]}')).toEqual({
        kind: 'entity',
        entity: { name: 'Bob', entityType: 'entity', observations: [] },
        notes: ['type missing: stored as "entity"'],
      });
    });

    it('an explicit entityType wins over the type fallback', () => {
      const parsed = parseMemoryLine('{"type":"person","name":"Bob","entityType":"human","observations":[]}');
      expect(parsed.kind === 'entity' && parsed.entity.entityType).toBe('human');
    });

    it('an entity line without observations has none', () => {
      expect(parseMemoryLine('{"type":"entity","name":"Bob","entityType":"person"}')).toEqual({
        kind: 'entity',
        entity: { name: 'Bob', entityType: 'person', observations: [] },
      });
    });
  });

  it('ignores the _aim marker line of mcp-knowledge-graph', () => {
    const parsed = parseMemoryLine('{"type":"_aim","source":"mcp-knowledge-graph"}');
    expect(parsed.kind).toBe('ignored');
    if (parsed.kind === 'ignored') expect(parsed.reason).toContain('_aim');
  });

  it('reads names, types, observations and relation ends in NFC, as the tools store them (issue 26)', () => {
    expect(
      parseMemoryLine(JSON.stringify({ type: 'entity', name: 'Cafe\u0301', entityType: 'pla\u0301ce', observations: ['nin\u0303o'] })),
    ).toEqual({
      kind: 'entity',
      entity: { name: 'Café', entityType: 'pláce', observations: ['niño'] },
      notes: ['"name", "entityType", observation 1 stored in Unicode NFC (written in another form)'],
    });
    expect(parseMemoryLine(JSON.stringify({ type: 'relation', from: 'Cafe\u0301', to: 'A\u030a', relationType: 'vi\u0301a' }))).toEqual({
      kind: 'relation',
      relation: { from: 'Café', to: 'Å', relationType: 'vía' },
      notes: ['"from", "to", "relationType" stored in Unicode NFC (written in another form)'],
    });
  });

  it('writes a relation end_relation ended with ended_at after the official keys, and reads it back (issue 33)', () => {
    const ended = { from: 'Ana', to: 'Acme', relationType: 'works_at', ended_at: '2026-03-01T10:00:00.000Z' };
    const line = relationLine(ended);
    expect(line).toBe('{"type":"relation","from":"Ana","to":"Acme","relationType":"works_at","ended_at":"2026-03-01T10:00:00.000Z"}');
    expect(parseMemoryLine(line)).toEqual({ kind: 'relation', relation: ended });
    // A current relation's line is the official one, byte for byte.
    expect(relationLine({ from: 'Ana', to: 'Acme', relationType: 'works_at' })).toBe(
      '{"type":"relation","from":"Ana","to":"Acme","relationType":"works_at"}',
    );
    // An end that is no date is refused, not read as a relation that holds.
    expectError(parseMemoryLine('{"type":"relation","from":"a","to":"b","relationType":"r","ended_at":"yesterday"}'));
    expectError(parseMemoryLine('{"type":"relation","from":"a","to":"b","relationType":"r","ended_at":12}'));
  });

  it("says why a line is not JSON without quoting the line's text (a secret in it would reach stderr)", () => {
    const parsed = parseMemoryLine('{"type":"entity","name":"x","token": ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8}');
    expect(parsed).toMatchObject({ kind: 'error', reason: expect.stringMatching(/^not valid JSON \(Unexpected token/) as unknown });
    expect(JSON.stringify(parsed)).not.toContain('ghp_');
    expect(parseMemoryLine('{"type":"entity"')).toMatchObject({
      kind: 'error',
      reason: expect.stringMatching(/^not valid JSON \(.+\)$/) as unknown,
    });
  });

  it('ignores other unknown line types', () => {
    expect(parseMemoryLine('{"type":"comment","text":"hello"}').kind).toBe('ignored');
    expect(parseMemoryLine('{"hello":"world"}').kind).toBe('ignored');
  });

  describe('errors carry a reason', () => {
    it.each([
      ['truncated JSON', '{"type":"entity","name":"x"'],
      ['not JSON at all', 'hello world'],
      ['trailing garbage', '{"type":"entity"} x'],
      ['an array', '[{"type":"entity","name":"x","entityType":"t","observations":[]}]'],
      ['null', 'null'],
      ['a number', '42'],
      ['a string', '"entity"'],
      ['non-string observation', '{"type":"entity","name":"x","entityType":"t","observations":["ok",42]}'],
      ['null observation', '{"type":"entity","name":"x","entityType":"t","observations":[null]}'],
      ['observations not an array', '{"type":"entity","name":"x","entityType":"t","observations":"one"}'],
      ['entity without a name', '{"type":"entity","entityType":"t","observations":[]}'],
      ['entity with a numeric name', '{"type":"entity","name":7,"entityType":"t","observations":[]}'],
      ['relation without relationType', '{"type":"relation","from":"a","to":"b"}'],
      ['relation without from', '{"type":"relation","to":"b","relationType":"r"}'],
      ['relation with a numeric to', '{"type":"relation","from":"a","to":2,"relationType":"r"}'],
    ])('%s', (_label, line) => {
      expectError(parseMemoryLine(line));
    });

    it('says which part is wrong', () => {
      const bad = parseMemoryLine('{"type":"entity","name":"x","entityType":"t","observations":[1]}');
      expect(bad.kind === 'error' && bad.reason).toMatch(/observations/);
      const notJson = parseMemoryLine('{');
      expect(notJson.kind === 'error' && notJson.reason).toMatch(/JSON/);
    });
  });

  describe('issue 10: text that is not well-formed Unicode is refused, as at the MCP boundary', () => {
    // JSON's \u escapes can spell a lone UTF-16 surrogate; SQLite would store it as bytes that are
    // not UTF-8 and export would write it back as three U+FFFD.
    it.each([
      ['the name', '{"type":"entity","name":"a\\ud800","entityType":"t","observations":[]}', /"name" .*\\uD800\) at index 1/],
      ['the entityType', '{"type":"entity","name":"a","entityType":"\\udfff","observations":[]}', /"entityType" .*\\uDFFF\) at index 0/],
      [
        'an observation',
        '{"type":"entity","name":"a","entityType":"t","observations":["ok","x\\udc00y"]}',
        /"observations"\[1\] .*\\uDC00\) at index 1/,
      ],
      ['the type read as the entityType', '{"type":"person\\ud800","name":"a","observations":[]}', /"type" .*\\uD800/],
      ['a variant name key', '{"type":"entity","entityName":"\\ud83e","observations":[]}', /"entityName" .*\\uD83E/],
      ['from', '{"type":"relation","from":"\\ud800\\ud800","to":"b","relationType":"r"}', /"from" .*\\uD800\) at index 0/],
      ['to', '{"type":"relation","from":"a","to":"b\\udbff","relationType":"r"}', /"to" .*\\uDBFF/],
      ['relationType', '{"type":"relation","from":"a","to":"b","relationType":"\\udc00r"}', /"relationType" .*\\uDC00/],
    ])('a lone surrogate in %s makes the line an error naming the field and the fix', (_label, line, reason) => {
      const parsed = parseMemoryLine(line);
      expect(parsed.kind).toBe('error');
      expect(parsed.kind === 'error' && parsed.reason).toMatch(reason);
      expect(parsed.kind === 'error' && parsed.reason).toMatch(/not well-formed Unicode.*surrogates only in pairs/);
    });

    it('keeps a surrogate pair written as two escapes: it is one character', () => {
      expect(parseMemoryLine('{"type":"entity","name":"\\ud83e\\udde0","entityType":"t","observations":["x\\ud83d\\ude00"]}')).toEqual({
        kind: 'entity',
        entity: { name: '🧠', entityType: 't', observations: ['x😀'] },
      });
    });

    it('property: a line is an error exactly when a field it keeps holds a lone surrogate', () => {
      // fast-check's 'binary' unit never yields a surrogate half alone; mix some in (a pair may still form).
      const withHalves = fc.oneof(
        fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff'),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      );
      let sawIllFormed = 0;
      fc.assert(
        fc.property(
          fc.string({ unit: withHalves, maxLength: 12 }),
          fc.array(fc.string({ unit: withHalves, maxLength: 12 }), { maxLength: 4 }),
          (name, observations) => {
            const parsed = parseMemoryLine(entityLine({ name, entityType: 't', observations }));
            const illFormed = [name, ...observations].some((t) => /\p{Cs}/u.test(t));
            if (illFormed) sawIllFormed++;
            expect(parsed.kind).toBe(illFormed ? 'error' : 'entity');
          },
        ),
        { numRuns: 500 },
      );
      expect(sawIllFormed).toBeGreaterThan(50);
    });
  });

  it.each(['', '   ', '\t', '\r'])('blank line %j → blank', (line) => {
    expect(parseMemoryLine(line)).toEqual({ kind: 'blank' });
  });

  it('property: never throws on any input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.json()), (line) => {
        const parsed = parseMemoryLine(line);
        expect(['entity', 'relation', 'blank', 'ignored', 'error']).toContain(parsed.kind);
      }),
      { numRuns: 500 },
    );
  });
});

describe('formatMemoryFile', () => {
  const alice: Entity = { name: 'Alice', entityType: 'person', observations: ['likes tea', 'has "quotes"'] };
  const bob: Entity = { name: 'Bob', entityType: 'person', observations: [] };
  const knows: Relation = { from: 'Alice', to: 'Bob', relationType: 'knows' };
  const worksAt: Relation = { from: 'Bob', to: 'Anthropic', relationType: 'works_at' };

  it('writes entities first, then relations, "\\n"-joined with no trailing newline, keys in official order', () => {
    const graph: KnowledgeGraph = { entities: [alice, bob], relations: [knows, worksAt] };
    expect(formatMemoryFile(graph)).toBe(
      [
        '{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea","has \\"quotes\\""]}',
        '{"type":"entity","name":"Bob","entityType":"person","observations":[]}',
        '{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}',
        '{"type":"relation","from":"Bob","to":"Anthropic","relationType":"works_at"}',
      ].join('\n'),
    );
  });

  it('puts relations after entities regardless of how the object was built', () => {
    const graph: KnowledgeGraph = { relations: [knows], entities: [bob] };
    const lines = formatMemoryFile(graph).split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['entity', 'relation']);
  });

  it('writes the keys in order type, name, entityType, observations / type, from, to, relationType', () => {
    const scrambled = { observations: ['o'], entityType: 't', name: 'n' } as Entity;
    expect(Object.keys(JSON.parse(entityLine(scrambled)) as object)).toEqual(['type', 'name', 'entityType', 'observations']);
    const scrambledRel = { relationType: 'r', to: 'b', from: 'a' } as Relation;
    expect(Object.keys(JSON.parse(relationLine(scrambledRel)) as object)).toEqual(['type', 'from', 'to', 'relationType']);
  });

  it('writes only the official fields (no Limbic extras such as status)', () => {
    const withExtras = { ...bob, status: 'archivado', id: 7 } as Entity;
    expect(formatMemoryFile({ entities: [withExtras], relations: [] })).toBe(
      '{"type":"entity","name":"Bob","entityType":"person","observations":[]}',
    );
  });

  it('an empty graph is an empty file', () => {
    expect(formatMemoryFile({ entities: [], relations: [] })).toBe('');
  });

  it('ends without a newline', () => {
    expect(formatMemoryFile({ entities: [alice], relations: [knows] }).endsWith('\n')).toBe(false);
  });

  it('property: parsing every written line gives the graph back', () => {
    const text = fc.string({ unit: 'binary', maxLength: 20 });
    const entityArb = fc.record({ name: text, entityType: text, observations: fc.array(text, { maxLength: 5 }) });
    const relationArb = fc.record({ from: text, to: text, relationType: text });
    fc.assert(
      fc.property(fc.array(entityArb, { maxLength: 6 }), fc.array(relationArb, { maxLength: 6 }), (entities, relations) => {
        const file = formatMemoryFile({ entities, relations });
        const lines = file === '' ? [] : file.split('\n');
        expect(lines).toHaveLength(entities.length + relations.length);
        // The notes (text stored in NFC) are the import report's (issue 35 item 13), tested apart.
        const parsed = lines.map(parseMemoryLine).map((p) => {
          const { notes: _notes, ...rest } = p as ParsedLine & { notes?: unknown };
          return rest;
        });
        // Text comes back in NFC, the form every tool stores (issue 26).
        const nfc = (t: string) => t.normalize('NFC');
        expect(parsed).toEqual([
          ...entities.map((e) => ({
            kind: 'entity',
            entity: { name: nfc(e.name), entityType: nfc(e.entityType), observations: e.observations.map(nfc) },
          })),
          ...relations.map((r) => ({
            kind: 'relation',
            relation: { from: nfc(r.from), to: nfc(r.to), relationType: nfc(r.relationType) },
          })),
        ]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('Limbic export lines (issue 35 item 4)', () => {
  const T = Date.UTC(2026, 0, 5, 9, 30, 15, 123);
  const entity: ExportEntity = {
    name: 'Alice',
    entityType: 'person',
    status: 'archived',
    createdAt: T,
    updatedAt: T + 5,
    project: 'github.com/acme/billing',
    observations: [
      { content: 'likes tea', kind: 'generic', createdAt: T },
      { content: 'decided to move', kind: 'decision', createdAt: T + 1 },
    ],
    superseded: [{ content: 'lives in Lyon', kind: 'fact', createdAt: T - 9, supersededAt: T + 2, supersededBy: 'lives in Berlin' }],
    access: { count: 3, lastAccess: T + 3, days: ['2026-01-05'] },
  };

  it('writes the official keys first, in the official order, with plain string observations', () => {
    const line = JSON.parse(limbicEntityLine(entity)) as Record<string, unknown>;
    expect(Object.keys(line).slice(0, 4)).toEqual(['type', 'name', 'entityType', 'observations']);
    expect(line.observations).toEqual(['likes tea', 'decided to move']);
    expect(line.observation_kinds).toEqual(['generic', 'decision']);
  });

  it('reads every field back, to the millisecond', () => {
    expect(parseMemoryLine(limbicEntityLine(entity))).toEqual({
      kind: 'entity',
      entity: { name: 'Alice', entityType: 'person', observations: ['likes tea', 'decided to move'] },
      limbic: {
        status: 'archived',
        createdAt: T,
        updatedAt: T + 5,
        project: 'github.com/acme/billing',
        observationKinds: ['generic', 'decision'],
        observationTimes: [T, T + 1],
        superseded: entity.superseded,
        access: entity.access,
      },
    });
    const relation = { from: 'Alice', to: 'Acme', relationType: 'works_at', context: 'since 2024', createdAt: T, endedAt: T + 7 };
    expect(parseMemoryLine(limbicRelationLine(relation))).toEqual({
      kind: 'relation',
      relation: { from: 'Alice', to: 'Acme', relationType: 'works_at', ended_at: new Date(T + 7).toISOString() },
      limbic: { context: 'since 2024', createdAt: T },
    });
    expect(parseMemoryLine(rankingLine({ gamma: 0.4, betaSal: 0.2, rrfK: 23, tunedAt: T }))).toEqual({
      kind: 'ranking',
      ranking: { gamma: 0.4, betaSal: 0.2, rrfK: 23, tunedAt: T },
    });
    expect(parseMemoryLine(coOccurrenceLine({ a: 'Alice', b: 'Acme', count: 4, lastCo: T }))).toEqual({
      kind: 'co-occurrence',
      pair: { a: 'Alice', b: 'Acme', count: 4, lastCo: T },
    });
  });

  it('keeps a line whose Limbic field is not as Limbic writes it, and says what was left out', () => {
    const line = JSON.stringify({
      type: 'entity',
      name: 'Bob',
      entityType: 'person',
      observations: ['a', 'b'],
      status: 'sleeping',
      observation_kinds: ['decision'],
      created_at: 'yesterday',
    });
    expect(parseMemoryLine(line)).toEqual({
      kind: 'entity',
      entity: { name: 'Bob', entityType: 'person', observations: ['a', 'b'] },
      limbic: {
        status: undefined,
        createdAt: undefined,
        updatedAt: undefined,
        project: undefined,
        observationKinds: undefined,
        observationTimes: undefined,
        superseded: undefined,
        access: undefined,
      },
      notes: [
        '"status" is not one of active, paused, completed, archived: stored as active',
        '"observation_kinds" is not 2 kinds, one per observation: every observation stored as generic',
        '"created_at" is not an ISO 8601 date: the import time is stored instead',
      ],
    });
  });
});
