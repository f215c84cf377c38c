/**
 * Namespace names that cannot name a file everywhere are refused before anything is made (issue 35,
 * item 14): Windows' device names, with or without an extension and in any case.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { namespaceDbPath, namespaceSchema, parseNamespace } from '../../src/http/namespaces.js';
import { CLI, tempDir } from '../helpers/fixtures.js';

const DEVICES = [
  'con',
  'prn',
  'aux',
  'nul',
  ...Array.from({ length: 10 }, (_, i) => `com${i}`),
  ...Array.from({ length: 10 }, (_, i) => `lpt${i}`),
];

describe('namespace names (issue 35: Windows device names)', () => {
  it('refuses every Windows device name, with an extension and in any case, on both backends', () => {
    for (const name of [...DEVICES, 'con.txt', 'nul.db', 'CON', 'Nul', 'cOm1', 'LPT9.log', 'aux.']) {
      expect(() => parseNamespace(name), name).toThrow(/not a namespace name/);
      expect(() => namespaceDbPath('/d/memory.db', name), name).toThrow(/not a namespace name/);
      expect(() => namespaceSchema(name), name).toThrow(/not a namespace name/);
    }
    expect(() => parseNamespace('nul')).toThrow(/Windows device name.*Choose another, such as "nul-notes"/);
  });

  it('keeps names that only begin or end like one', () => {
    for (const name of ['console', 'con-1', 'com10', 'lpt', 'nulls', 'aux_work', 'xcon', 'com1x']) expect(parseNamespace(name)).toBe(name);
  });

  describe('through the CLI', () => {
    let dir: string;
    let cleanup: () => void;
    beforeEach(() => ({ dir, cleanup } = tempDir('limbic-ns-names-')));
    afterEach(() => cleanup());

    it('refuses them for a memory and for a token, and makes no file', () => {
      const db = join(dir, 'memory.db');
      const run = (...args: string[]) =>
        spawnSync(process.execPath, [CLI, '--db', db, '--no-model', ...args], {
          encoding: 'utf8',
          env: { ...process.env, LIMBIC_NAMESPACE: '' },
        });
      const file = join(dir, 'memory.jsonl');
      writeFileSync(file, '{"type":"entity","name":"a","entityType":"t","observations":["x"]}\n');
      const write = run('--namespace', 'com1', 'import', file);
      expect(write.status).toBe(1);
      expect(write.stderr).toMatch(/"com1" is not a namespace name: it is a Windows device name/);
      const token = run('token', 'create', '--namespace', 'aux');
      expect(token.status).toBe(1);
      expect(token.stderr).toMatch(/"aux" is not a namespace name: it is a Windows device name/);
      expect(existsSync(join(dir, 'memory.namespaces'))).toBe(false);
      expect(readdirSync(dir).filter((f) => f.startsWith('memory.tokens.db'))).toEqual([]);
    });
  });
});
