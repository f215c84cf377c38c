/**
 * docs/configuration.md's table is the one list of settings (issue 27): every key of the config
 * schema (src/core/config.ts) and every LIMBIC_* variable src/ reads has a row, and each row's
 * default is the one the code uses.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/core/config.js';
import { DEFAULT_NAMESPACE } from '../../src/http/namespaces.js';
import { DEFAULT_LIMITS, LIMIT_SETTINGS } from '../../src/cli/serve-http.js';
import { heavySlotOptionsFromEnv } from '../../src/service/heavy-slots.js';
import { autoTuneMinutes } from '../../src/service/tuning.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

interface Row {
  readonly setting: string;
  readonly flag: string;
  readonly variable: string;
  readonly default: string;
}

/** The rows of the first table whose header names "environment variable" and "default"; backticks removed. */
export function settingsTable(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const cells = (line: string): string[] =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((c) => c.trim().replaceAll('`', ''));
  const start = lines.findIndex((l) => l.trim().startsWith('|') && /environment variable/i.test(l) && /default/i.test(l));
  if (start < 0) return [];
  const header = cells(lines[start] ?? '').map((h) => h.toLowerCase());
  const column = (name: string): number => header.findIndex((h) => h.startsWith(name));
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.trim().startsWith('|')) break;
    const c = cells(line);
    rows.push({
      setting: c[column('setting')] ?? '',
      flag: c[column('flag')] ?? '',
      variable: c[column('environment variable')] ?? '',
      default: c[column('default')] ?? '',
    });
  }
  return rows;
}

/** The `@default` of each schema key's JSDoc in config.ts: what main.ts fills in when the schema has none. */
function jsdocDefaults(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of source.matchAll(/\/\*\*((?:[^*]|\*(?!\/))*)\*\/\s*\n\s*(\w+):/g)) {
    const doc = (m[1] ?? '').replace(/\s*\n\s*\*\s?/g, ' ');
    const value = /@default\s+(.+?)\s*$/.exec(doc)?.[1];
    if (value !== undefined && m[2] !== undefined) found.set(m[2], value);
  }
  return found;
}

/** The default the schema itself fills in for a key, or undefined when it has none. */
function schemaDefault(key: string): unknown {
  const field = (ConfigSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>)[key];
  const parsed = field?.safeParse(undefined);
  return parsed?.success === true ? parsed.data : undefined;
}

/** LIMBIC_* variables not in the schema, with the default the code that reads them uses. */
function variableDefaults(): Map<string, string> {
  const heavy = heavySlotOptionsFromEnv({});
  const pg = read('src/store/postgres/pg-connection.ts');
  const pgDefault = (option: string): string =>
    (new RegExp(`${option} \\?\\? ([\\d_]+)`).exec(pg)?.[1] ?? `no default for ${option} in pg-connection.ts`).replaceAll('_', '');
  return new Map([
    ['LIMBIC_NAMESPACE', DEFAULT_NAMESPACE],
    ['LIMBIC_HEAVY_TOOL_SLOTS', String(heavy.slots)],
    ['LIMBIC_HEAVY_TOOL_WAIT_MS', String(heavy.waitMs)],
    ['LIMBIC_AUTO_TUNE_MINUTES', autoTuneMinutes({}) === undefined ? 'off' : String(autoTuneMinutes({}))],
    ['LIMBIC_PG_POOL_SIZE', pgDefault('poolSize')],
    ['LIMBIC_PG_STATEMENT_TIMEOUT_MS', pgDefault('statementTimeoutMs')],
    ...Object.entries(LIMIT_SETTINGS).map(([key, name]): [string, string] => [
      name,
      String(DEFAULT_LIMITS[key as keyof typeof DEFAULT_LIMITS]),
    ]),
  ]);
}

/** Every LIMBIC_* name written in src/. */
function variablesInSource(): string[] {
  const names = new Set<string>();
  for (const file of readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    for (const [name] of read(join('src', file)).matchAll(/\bLIMBIC_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(name);
  }
  return [...names].sort();
}

/** A number written for people (2,000 or 30000) as digits. */
const digits = (text: string): string => text.replace(/(\d),(?=\d{3}\b)/g, '$1');

describe('docs/configuration.md', () => {
  const rows = existsSync(join(root, 'docs/configuration.md')) ? settingsTable(read('docs/configuration.md')) : [];

  it('has a row for every key of the config schema, with the default the code uses', () => {
    const fromDocs = jsdocDefaults(read('src/core/config.ts'));
    const problems: string[] = [];
    for (const key of Object.keys(ConfigSchema.shape)) {
      const row = rows.find((r) => r.setting.split(/[\s,]+/).includes(key));
      if (row === undefined) {
        problems.push(`${key}: no row`);
        continue;
      }
      const value = schemaDefault(key);
      const expected = value !== undefined ? String(value) : fromDocs.get(key);
      if (expected === undefined) {
        if (row.default === '') problems.push(`${key}: empty default cell (say "none" when there is none)`);
      } else if (!digits(row.default).includes(expected)) problems.push(`${key}: default "${row.default}", the code's is "${expected}"`);
    }
    expect(problems).toEqual([]);
  });

  it('has a row for every LIMBIC_* variable src/ reads, with the default the code uses', () => {
    const defaults = variableDefaults();
    const problems: string[] = [];
    for (const name of variablesInSource()) {
      const row = rows.find((r) => r.variable.split(/[\s,=()]+/).includes(name));
      if (row === undefined) problems.push(`${name}: no row`);
      else if (
        defaults.has(name) &&
        !digits(row.default)
          .split(/[\s(),;]+/)
          .includes(defaults.get(name) ?? '')
      )
        problems.push(`${name}: default "${row.default}", the code's is "${defaults.get(name)}"`);
    }
    expect(problems).toEqual([]);
  });

  it('reads a settings table, so the checks above can fail', () => {
    const table = settingsTable(
      '| setting | flag | environment variable | default |\n|---|---|---|---|\n| `dbPath` | `--db` | `LIMBIC_DB` | `~/x`, else y |\n',
    );
    expect(table).toEqual([{ setting: 'dbPath', flag: '--db', variable: 'LIMBIC_DB', default: '~/x, else y' }]);
    expect(variablesInSource()).toContain('LIMBIC_DB');
    expect(schemaDefault('modelId')).toBe('multilingual-e5-small');
    expect(jsdocDefaults(read('src/core/config.ts')).get('dbPath')).toMatch(/memory\.db/);
  });
});
