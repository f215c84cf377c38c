/** Issue 25, item 14: `limbic stats` and `limbic search` read by a person at a terminal; JSON for scripts. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wantsJson } from '../../src/cli/readable.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

/** The built CLI with a terminal for stdout (util-linux `script`), and without one. */
const atTerminal = (args: string[]): string =>
  execFileSync('script', ['-qc', [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], {
    env: { ...process.env, LIMBIC_NO_MODEL: '1' },
  }).toString();
const piped = (args: string[]): string =>
  execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, LIMBIC_NO_MODEL: '1' } }).toString();

describe('limbic stats and search', () => {
  it('chooses JSON for --json or a pipe, text for a terminal', () => {
    expect(wantsJson(true, true)).toBe(true);
    expect(wantsJson(undefined, false)).toBe(true);
    expect(wantsJson(undefined, undefined)).toBe(true);
    expect(wantsJson(false, true)).toBe(false);
  });

  it('print a few readable lines at a terminal, and the JSON when piped or asked', () => {
    const tmp = tempDir();
    try {
      const db = join(tmp.dir, 'memory.db');
      const file = join(tmp.dir, 'memory.jsonl');
      writeFileSync(
        file,
        '{"type":"entity","name":"Basil","entityType":"plant","observations":["grows next to tomatoes","keeps aphids away"]}\n',
      );
      piped(['--db', db, 'import', file]);
      const stats = atTerminal(['--db', db, 'stats']);
      expect(stats).toMatch(/^1 entity, 2 observations, 0 relations/);
      expect(stats).toMatch(/ranking\s+γ 0\.01, β_sal 0\.5, k 60 \(default\)/);
      expect(stats).not.toContain('{');
      expect(JSON.parse(piped(['--db', db, 'stats'])).entities).toBe(1);
      expect(JSON.parse(atTerminal(['--db', db, 'stats', '--json'])).entities).toBe(1);
      const search = atTerminal(['--db', db, 'search', 'tomatoes']);
      expect(search).toMatch(/1\. Basil \(plant\)\s+score/);
      expect(search).toMatch(/- grows next to tomatoes/);
      expect(search).toMatch(/1 of 1 \(legs: fts\)\. --json for everything\./);
      expect(JSON.parse(piped(['--db', db, 'search', 'tomatoes'])).results[0].name).toBe('Basil');
    } finally {
      tmp.cleanup();
    }
  });
});
