/** The `limbic` binary: import, export, stats, help, database location. */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);

async function limbic(args: string[], env: Record<string, string> = {}) {
  return exec(process.execPath, [CLI, ...args], { env: { ...process.env, LIMBIC_NO_MODEL: '1', ...env } });
}

// Lines exactly as the official server writes them (compat/official-memory-server.md §1).
const OFFICIAL_FILE = [
  '{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish","Likes \\"quotes\\" and émojis 🧠"]}',
  '{"type":"entity","name":"Anthropic","entityType":"organization","observations":[]}',
  '{"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}',
  '{"type":"relation","from":"John_Smith","to":"Nowhere","relationType":"visited"}',
].join('\n');

describe('limbic CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(() => {
    tmp = tempDir();
    db = join(tmp.dir, 'memory.db');
  });
  afterEach(() => tmp.cleanup());

  it('imports an official memory.jsonl and exports it byte for byte', async () => {
    const file = join(tmp.dir, 'memory.jsonl');
    writeFileSync(file, OFFICIAL_FILE);
    const { stdout } = await limbic(['--db', db, 'import', file]);
    expect(JSON.parse(stdout)).toMatchObject({ entitiesAdded: 2, relationsAdded: 2, skipped: 0, danglingRelations: 1 });
    const exported = await limbic(['--db', db, 'export', '--official']);
    expect(exported.stdout).toBe(OFFICIAL_FILE);
    const out = join(tmp.dir, 'out.jsonl');
    await limbic(['--db', db, 'export', '--official', out]);
    expect(readFileSync(out, 'utf8')).toBe(OFFICIAL_FILE);
  });

  it('is idempotent, and import → export → import loses nothing', async () => {
    const file = join(tmp.dir, 'memory.jsonl');
    writeFileSync(file, OFFICIAL_FILE);
    await limbic(['--db', db, 'import', file]);
    const again = await limbic(['--db', db, 'import', file]);
    expect(JSON.parse(again.stdout)).toMatchObject({ entitiesAdded: 0, observationsAdded: 0, relationsAdded: 0 });
    const first = (await limbic(['--db', db, 'export'])).stdout;
    const roundTrip = join(tmp.dir, 'round.jsonl');
    writeFileSync(roundTrip, first);
    const db2 = join(tmp.dir, 'second.db');
    await limbic(['--db', db2, 'import', roundTrip]);
    expect((await limbic(['--db', db2, 'export'])).stdout).toBe(first);
  });

  it('skips malformed lines with their numbers, accepts field variants, ignores other line types', async () => {
    const file = join(tmp.dir, 'messy.jsonl');
    writeFileSync(
      file,
      [
        '{"type":"_aim","source":"mcp-knowledge-graph"}',
        '{"type":"entity","name":"Good","entityType":"t","observations":["ok"]}',
        '{this is not json',
        '',
        '{"type":"entity","entityName":"Variant","observations":["from entityName"]}',
        '{"type":"relation","from_id":"Good","to_id":"Variant","relation_type":"links"}',
        '{"type":"entity","name":"Bad","entityType":"t","observations":[1,2]}',
        '{"type":"relation","from":"Good"}',
      ].join('\r\n'),
    );
    const { stdout, stderr } = await limbic(['--db', db, 'import', file]);
    expect(JSON.parse(stdout)).toMatchObject({ lines: 8, entitiesAdded: 2, relationsAdded: 1, skipped: 3, ignored: 1 });
    expect(stderr).toMatch(/line 3 skipped: not valid JSON/);
    expect(stderr).toMatch(/line 7 skipped: "observations" must hold only strings/);
    expect(stderr).toMatch(/line 8 skipped: a relation needs/);
    const exported = (await limbic(['--db', db, 'export', '--official'])).stdout.split('\n').map((l) => JSON.parse(l));
    expect(exported).toEqual([
      { type: 'entity', name: 'Good', entityType: 't', observations: ['ok'] },
      { type: 'entity', name: 'Variant', entityType: 'entity', observations: ['from entityName'] },
      { type: 'relation', from: 'Good', to: 'Variant', relationType: 'links' },
    ]);
  });

  it('issue 10: skips lines with a lone UTF-16 surrogate escape, with their numbers, and exports no U+FFFD', async () => {
    const file = join(tmp.dir, 'surrogates.jsonl');
    writeFileSync(
      file,
      [
        '{"type":"entity","name":"Good","entityType":"t","observations":["ok","pair \\ud83e\\udde0 kept"]}',
        '{"type":"entity","name":"Lone\\ud800","entityType":"t","observations":[]}',
        '{"type":"entity","name":"Other","entityType":"t","observations":["half \\udc00 a pair"]}',
        '{"type":"relation","from":"Good","to":"Good\\udfff","relationType":"self"}',
      ].join('\n'),
    );
    const { stdout, stderr } = await limbic(['--db', db, 'import', file]);
    expect(JSON.parse(stdout)).toMatchObject({ lines: 4, entitiesAdded: 1, relationsAdded: 0, skipped: 3 });
    expect(stderr).toMatch(/line 2 skipped: "name" is not well-formed Unicode/);
    expect(stderr).toMatch(/line 3 skipped: "observations"\[0\] is not well-formed Unicode/);
    expect(stderr).toMatch(/line 4 skipped: "to" is not well-formed Unicode/);
    const exported = (await limbic(['--db', db, 'export', '--official'])).stdout;
    expect(exported).not.toContain('\uFFFD');
    expect(JSON.parse(exported)).toEqual({ type: 'entity', name: 'Good', entityType: 't', observations: ['ok', 'pair 🧠 kept'] });
  });

  it('puts the database in the data directory by default, creating the folder', async () => {
    const dataHome = join(tmp.dir, 'xdg-data');
    const file = join(tmp.dir, 'memory.jsonl');
    writeFileSync(file, OFFICIAL_FILE);
    await limbic(['import', file], { XDG_DATA_HOME: dataHome, LIMBIC_DB: '' });
    expect(existsSync(join(dataHome, 'limbic', 'memory.db'))).toBe(true);
    const viaEnv = join(tmp.dir, 'env', 'via-env.db');
    mkdirSync(join(tmp.dir, 'env'));
    await limbic(['import', file], { LIMBIC_DB: viaEnv });
    const { stdout } = await limbic(['stats'], { LIMBIC_DB: viaEnv });
    expect(JSON.parse(stdout).database.path).toBe(viaEnv);
  });

  it('refuses a --db that would silently make a new memory somewhere else, saying what to do (issue 25)', async () => {
    const cwd = tmp.dir;
    const run = (args: string[], env: Record<string, string> = {}) =>
      exec(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, LIMBIC_NO_MODEL: '1', ...env } });
    await expect(run(['--db', join(tmp.dir, 'no-such-folder', 'memory.db'), 'stats'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/The folder of --db ".*no-such-folder.*" does not exist .*mkdir -p/),
    });
    await expect(run(['--db', '~/memory.db', 'stats'])).rejects.toMatchObject({
      stderr: expect.stringMatching(/starts with "~", which only a shell expands.*Write the whole path/),
    });
    await expect(run(['stats'], { LIMBIC_DB: 'postgress://me:secret@localhost/memory' })).rejects.toMatchObject({
      stderr: expect.stringMatching(/scheme "postgress", which Limbic does not know/),
    });
    // The same for every command that opens a memory, tune and connect included; a password never reaches a file name.
    await expect(run(['--db', 'postgress://me:secret@localhost/memory', 'tune'])).rejects.toMatchObject({ code: 1 });
    await expect(run(['--db', 'postgress://me:secret@localhost/memory', 'connect', 'cursor', '--print'])).rejects.toMatchObject({
      code: 1,
    });
    // tune on a postgres:// URL talks to PostgreSQL (none listens on port 1 here): an error, not "0 searches" from a new file.
    await expect(run(['--db', 'postgres://me:secret@127.0.0.1:1/memory', 'tune'])).rejects.toMatchObject({ code: 1 });
    expect(readdirSync(cwd)).toEqual([]);
    // A new memory where asked is made, and said once (by a command that writes; one that reads refuses, test/cli/export.test.ts).
    const fresh = join(tmp.dir, 'new.db');
    const file = join(tmp.dir, 'memory.jsonl');
    writeFileSync(file, OFFICIAL_FILE);
    expect((await run(['--db', fresh, 'import', file])).stderr).toContain(`created a new, empty memory at ${fresh}`);
    expect((await run(['--db', fresh, 'stats'])).stderr).not.toContain('created a new');
  });

  it('names a mistyped command and the nearest one, instead of handing it to serve (issue 25)', async () => {
    await expect(limbic(['--db', db, 'serch', 'foo'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown command 'serch'\. Did you mean 'search'\?/),
    });
    await expect(limbic(['--db', db, 'xyzzy'])).rejects.toMatchObject({
      stderr: expect.not.stringMatching(/Did you mean/),
    });
    expect(existsSync(db)).toBe(false);
  });

  it('has --help on every command', async () => {
    for (const args of [
      ['--help'],
      ['import', '--help'],
      ['export', '--help'],
      ['stats', '--help'],
      ['serve', '--help'],
      ['model', 'install', '--help'],
    ]) {
      const { stdout } = await limbic(args);
      expect(stdout, args.join(' ')).toMatch(/Usage: limbic/);
    }
  });

  it('says what to do when the import file is missing', async () => {
    await expect(limbic(['--db', db, 'import', join(tmp.dir, 'nope.jsonl')])).rejects.toMatchObject({
      stderr: expect.stringMatching(/No file at .*nope\.jsonl\. Pass the path of your memory\.jsonl/),
    });
  });
});
