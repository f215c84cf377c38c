/**
 * Issue 33, item 4: `limbic export FILE` writes through to what FILE names and never replaces what
 * it is (a link, a device, a FIFO); a missing folder is a clear error; no read of a memory creates one.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);

async function limbic(args: string[]) {
  return exec(process.execPath, [CLI, ...args], { env: { ...process.env, LIMBIC_NO_MODEL: '1' } });
}

// Exported with --official (these tests are about where the file goes; export-round-trip.test.ts is about what it holds).
const GRAPH = '{"type":"entity","name":"Basil","entityType":"plant","observations":["grows next to tomatoes"]}';

/** A character device of our own: a null device made in the temp folder where allowed (root), else /dev/null itself. */
function characterDevice(dir: string): string {
  const own = join(dir, 'null-device');
  try {
    execFileSync('mknod', [own, 'c', '1', '3'], { stdio: 'ignore' });
    return own;
  } catch {
    // Without CAP_MKNOD: the machine's own /dev/null, which a process that cannot make a device node cannot replace either.
    return '/dev/null';
  }
}

describe('limbic export FILE (issue 33)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let db: string;
  beforeEach(async () => {
    tmp = tempDir();
    db = join(tmp.dir, 'memory.db');
    const file = join(tmp.dir, 'memory.jsonl');
    writeFileSync(file, GRAPH);
    await limbic(['--db', db, 'import', file]);
  });
  afterEach(() => tmp.cleanup());

  it('writes through a symlink: the link stays a link, its target gets the graph', async () => {
    const target = join(tmp.dir, 'real.jsonl');
    writeFileSync(target, 'old content\n');
    const link = join(tmp.dir, 'link.jsonl');
    symlinkSync('real.jsonl', link);
    const { stderr } = await limbic(['--db', db, 'export', '--official', link]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('real.jsonl');
    expect(readFileSync(target, 'utf8')).toBe(GRAPH);
    expect(stderr).toContain(`wrote ${target}`);
    // A link to a file not made yet: the file is made where the link points, the link kept.
    const dangling = join(tmp.dir, 'later.jsonl');
    symlinkSync('made-by-export.jsonl', dangling);
    await limbic(['--db', db, 'export', '--official', dangling]);
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(tmp.dir, 'made-by-export.jsonl'), 'utf8')).toBe(GRAPH);
  });

  it('writes to a character device directly, leaving it a device', async () => {
    const device = characterDevice(tmp.dir);
    const { stderr } = await limbic(['--db', db, 'export', '--official', device]);
    expect(statSync(device).isCharacterDevice()).toBe(true);
    expect(stderr).toContain(`wrote ${device}`);
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('writes to a FIFO directly, so the program reading it gets the graph', async () => {
    const fifo = join(tmp.dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const reader = spawn('cat', [fifo]);
    let read = '';
    reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()));
    const closed = new Promise<void>((done) => reader.on('close', () => done()));
    try {
      await limbic(['--db', db, 'export', '--official', fifo]);
      expect(lstatSync(fifo).isFIFO()).toBe(true);
      await closed;
      expect(read).toBe(GRAPH);
    } finally {
      reader.kill();
    }
  });

  it('replaces a regular file atomically, keeping its permissions, and writes in place when other hard links share it', async () => {
    const file = join(tmp.dir, 'private.jsonl');
    writeFileSync(file, 'old\n');
    chmodSync(file, 0o600);
    await limbic(['--db', db, 'export', '--official', file]);
    expect(readFileSync(file, 'utf8')).toBe(GRAPH);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const shared = join(tmp.dir, 'shared.jsonl');
    const other = join(tmp.dir, 'other-name.jsonl');
    writeFileSync(shared, 'old\n');
    linkSync(shared, other);
    await limbic(['--db', db, 'export', '--official', shared]);
    expect(readFileSync(other, 'utf8')).toBe(GRAPH);
    expect(statSync(shared).ino).toBe(statSync(other).ino);
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('says what to do when the folder does not exist, writes nothing and creates no memory', async () => {
    const out = join(tmp.dir, 'no-such-folder', 'out.jsonl');
    const fresh = join(tmp.dir, 'fresh.db');
    for (const memory of [db, fresh]) {
      await expect(limbic(['--db', memory, 'export', out])).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/the folder .*no-such-folder does not exist\. Create it first \(mkdir -p ".*no-such-folder"\)/),
      });
    }
    const { stderr } = await limbic(['--db', db, 'export', out]).catch((e: { stderr: string }) => e);
    expect(stderr).not.toMatch(/ENOENT|\.tmp/);
    expect(existsSync(fresh)).toBe(false);
    expect(existsSync(join(tmp.dir, 'no-such-folder'))).toBe(false);
  });

  it('refuses to write over the database it exports, through a link too', async () => {
    const link = join(tmp.dir, 'looks-harmless.jsonl');
    symlinkSync(db, link);
    for (const target of [db, link]) {
      await expect(limbic(['--db', db, 'export', target])).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('it is the database being exported'),
      });
    }
    expect(JSON.parse((await limbic(['--db', db, 'stats', '--json'])).stdout).entities).toBe(1);
  });

  it.skipIf(!existsSync('/sys/kernel/notes'))('says which file it could not write and why, never a temporary file', async () => {
    // A kernel file nobody may write, in a folder where no file can be made: the temporary file fails, then the file itself.
    const { stderr } = await limbic(['--db', db, 'export', '/sys/kernel/notes']).catch((e: { stderr: string; code: number }) => {
      expect(e.code).toBe(1);
      return e;
    });
    expect(stderr).toMatch(/Cannot write the export to \/sys\/kernel\/notes: E[A-Z]+: .*Check the path and its permissions/);
    expect(stderr).not.toContain('.tmp');
  });

  it('refuses a folder, naming a file to write instead', async () => {
    const folder = join(tmp.dir, 'exports');
    mkdirSync(folder);
    await expect(limbic(['--db', db, 'export', folder])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/it is a folder\. Name a file in it, such as ".*exports\/memory\.jsonl"/),
    });
    expect(statSync(folder).isDirectory()).toBe(true);
  });
});

describe('commands that read a memory never create one (issue 33)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('export, stats, search, tune, consolidate and reembed name the missing file and leave nothing behind', async () => {
    const missing = join(tmp.dir, 'typo.db');
    for (const command of [
      ['export'],
      ['export', join(tmp.dir, 'out.jsonl')],
      ['stats'],
      ['search', 'basil'],
      ['tune'],
      ['consolidate'],
      ['reembed'],
    ]) {
      await expect(limbic(['--db', missing, ...command]), command.join(' ')).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(
          new RegExp(
            `There is no memory at ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} yet, so "limbic ${command[0]}" has nothing to work on; nothing was created\\..*limbic import`,
          ),
        ),
      });
    }
    // A namespace that was never written is named as such.
    await expect(limbic(['--db', missing, '--namespace', 'work', 'stats'])).rejects.toMatchObject({
      stderr: expect.stringMatching(/no memory at .*\(namespace "work"\)/),
    });
    // doctor reads without creating too.
    await limbic(['--db', missing, 'doctor', '--json']).catch(() => undefined);
    expect(readdirSync(tmp.dir)).toEqual([]);
  });

  it('names a file that is not a database and points to doctor, leaving the file as it was', async () => {
    const garbage = join(tmp.dir, 'notes.db');
    const bytes = Buffer.from('these are my notes, not a database\n'.repeat(200));
    writeFileSync(garbage, bytes);
    const jsonl = join(tmp.dir, 'memory.jsonl');
    writeFileSync(jsonl, '{"type":"entity","name":"Ada","entityType":"person","observations":["writes code"]}');
    for (const command of [['stats'], ['import', jsonl]]) {
      await expect(limbic(['--db', garbage, ...command]), command[0]).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`${garbage} is not a readable Limbic database (SQLite: file is not a database)`),
      });
    }
    const { stderr } = await limbic(['--db', garbage, 'stats']).catch((e: { stderr: string }) => e);
    expect(stderr).toContain(`limbic --db "${garbage}" doctor`);
    expect(readFileSync(garbage)).toEqual(bytes);
  });
});
