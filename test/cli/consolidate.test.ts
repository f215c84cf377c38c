/**
 * `limbic consolidate`: the built binary over a real SQLite file. With the real model it writes one
 * reflection per topic, linked `reflects_on` to its sources, and keeps them on a second run; without
 * one it groups by shared words, and a theme shared by everything is split into its topics rather
 * than written as one reflection of the whole memory (what LoCoMo showed). Bad flags exit 2.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);

interface Summary {
  reflections_created: { name: string; content: string; sources: string[] }[];
  clusters_found: number;
  existing_kept: number;
  entities_scanned: number;
  method: 'semantic' | 'words';
}

interface Line {
  type: string;
  name?: string;
  entityType?: string;
  observations?: string[];
  from?: string;
  to?: string;
  relationType?: string;
}

/** The same notes maintenance-semantic.test.ts measured: four per topic, named without their words. */
const TOPICS = [
  [
    'Tomatoes grow in the backyard garden',
    'We planted basil and tomatoes in spring',
    'The garden needs watering every evening',
    'Roses bloom near the garden fence in June',
  ],
  [
    'The quarterly budget was approved by finance',
    'Invoices are paid within thirty days',
    'Tax returns are filed every April',
    'The accountant reviews expenses monthly',
  ],
  [
    'Flew to Tokyo for the March conference',
    'Booked a hotel near the Lisbon train station',
    'Lost luggage on the flight to Berlin',
    'Train tickets to Madrid cost 80 euros',
  ],
];

async function limbic(args: string[], env: Record<string, string> = {}) {
  return exec(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
}

function importFile(dir: string, entities: readonly { name: string; entityType: string; observations: string[] }[]): string {
  const file = join(dir, 'seed.jsonl');
  writeFileSync(file, entities.map((e) => JSON.stringify({ type: 'entity', ...e })).join('\n'));
  return file;
}

async function exported(db: string): Promise<Line[]> {
  const { stdout } = await limbic(['--db', db, 'export'], { LIMBIC_NO_MODEL: '1' });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

describe('limbic consolidate (real model)', () => {
  const tmp = tempDir();
  const db = join(tmp.dir, 'memory.db');
  let first: Summary;
  let stderr: string;
  beforeAll(async () => {
    const notes = TOPICS.flatMap((t, k) => t.map((o, i) => ({ name: `Note ${k}.${i}`, entityType: 'Note', observations: [o] })));
    await limbic(['--db', db, 'import', importFile(tmp.dir, notes)], { LIMBIC_NO_MODEL: '1' });
    const run = await limbic(['--db', db, 'consolidate']);
    first = JSON.parse(run.stdout) as Summary;
    stderr = run.stderr;
  }, 180_000);
  afterAll(() => tmp.cleanup());

  it('prints its summary: one reflection per topic, by meaning', () => {
    expect(first).toMatchObject({ method: 'semantic', entities_scanned: 12, clusters_found: 3, existing_kept: 0 });
    expect(first.reflections_created.map((r) => [...r.sources].sort())).toEqual(TOPICS.map((t, k) => t.map((_, i) => `Note ${k}.${i}`)));
    for (const r of first.reflections_created) {
      expect(r.name).toMatch(/^Reflection: /);
      expect(r.content).toContain('related by meaning (4 entities)');
    }
    expect(stderr).not.toMatch(/error/i);
  });

  it('writes the reflections into the file, linked to their sources', async () => {
    const lines = await exported(db);
    const reflections = lines.filter((l) => l.type === 'entity' && l.entityType === 'Reflection');
    expect(reflections.map((l) => l.name).sort()).toEqual(first.reflections_created.map((r) => r.name).sort());
    for (const r of first.reflections_created) {
      const links = lines.filter((l) => l.type === 'relation' && l.from === r.name && l.relationType === 'reflects_on').map((l) => l.to);
      expect(links.sort()).toEqual([...r.sources].sort());
      expect(reflections.find((l) => l.name === r.name)?.observations).toContain(r.content);
    }
  });

  it('keeps the reflections on a second run instead of writing them again', async () => {
    const again = JSON.parse((await limbic(['--db', db, 'consolidate'])).stdout) as Summary;
    expect(again).toMatchObject({ reflections_created: [], clusters_found: 3, existing_kept: 3, entities_scanned: 12 });
    expect((await exported(db)).filter((l) => l.entityType === 'Reflection')).toHaveLength(3);
  });
});

describe('limbic consolidate without a model (shared words)', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

  it('splits a cluster of everything into its topics (at most 20 sources a reflection)', async () => {
    const db = join(tmp.dir, 'words.db');
    // Every note shares two words with every other, and a third with its own topic: one cut
    // joins all 24 (a reflection of everything); the re-split finds the two topics.
    const notes = ['orchard', 'invoice'].flatMap((topic) =>
      WORDS.map((w) => ({ name: `${topic} ${w}`, entityType: 'Note', observations: [`harbour lantern ${topic} ${w}`] })),
    );
    await limbic(['--db', db, 'import', importFile(tmp.dir, notes)], { LIMBIC_NO_MODEL: '1' });
    const run = JSON.parse((await limbic(['--db', db, 'consolidate'], { LIMBIC_NO_MODEL: '1' })).stdout) as Summary;
    expect(run).toMatchObject({ method: 'words', entities_scanned: 24, clusters_found: 2 });
    expect(run.reflections_created.map((r) => [...r.sources].sort())).toEqual(
      ['orchard', 'invoice'].map((t) => WORDS.map((w) => `${t} ${w}`).sort()),
    );
  });

  it('exits 2 naming the flag when --min-size or --max-entities is not a whole number of at least 2', async () => {
    const db = join(tmp.dir, 'flags.db');
    for (const args of [
      ['--min-size', '1'],
      ['--max-entities', 'many'],
    ]) {
      const failed = await limbic(['--db', db, 'consolidate', ...args], { LIMBIC_NO_MODEL: '1' }).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toContain(`${args[0]} must be a whole number of at least 2`);
    }
  });
});
