/**
 * What a pip user configured for `pip download`: the package index, extra indexes and a proxy,
 * read the way pip reads them (https://pip.pypa.io/en/stable/topics/configuration/), so the model
 * install without pip goes where pip would have gone.
 *
 * Files, each overriding the one before: PIP_CONFIG_FILE, then the global files, the user files
 * (legacy first), the virtualenv's file. Within a file `[download]` overrides `[global]`. The
 * environment (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_PROXY) overrides every file. Proxies for
 * the connection itself come from pip's `proxy` when set, else HTTPS_PROXY / HTTP_PROXY / NO_PROXY;
 * pip's `cert` names a CA bundle to trust as well.
 *
 * Pure apart from reading the files: the caller passes the environment, home folder and platform.
 */
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const DEFAULT_INDEX_URL = 'https://pypi.org/simple';

export interface PipSettings {
  /** The index `pip download` would use first. */
  readonly indexUrl: string;
  /** Indexes pip also searches (`extra-index-url`), in order. */
  readonly extraIndexUrls: readonly string[];
  /** Where indexUrl came from: "PIP_INDEX_URL", a file path, or "default". */
  readonly indexSource: string;
  /** pip's own `proxy` option (PIP_PROXY or `proxy =` in a file); wins over the *_PROXY variables. */
  readonly proxy: string | undefined;
  readonly httpsProxy: string | undefined;
  readonly httpProxy: string | undefined;
  readonly noProxy: string | undefined;
  /** pip's `cert` (PIP_CERT or `cert =`): a CA bundle to trust, for indexes and proxies with a private CA. */
  readonly cert: string | undefined;
  /** The configuration files that existed and were read, in the order read. */
  readonly filesRead: readonly string[];
}

export interface PipEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly platform: NodeJS.Platform;
}

/**
 * The configuration files pip reads, in pip's order (later files override earlier ones).
 * PIP_CONFIG_FILE set to the null device switches every file off, as in pip.
 */
export function pipConfigFiles({ env, home, platform }: PipEnvironment): string[] {
  const set = (v: string | undefined): v is string => v !== undefined && v !== '';
  const explicit = env.PIP_CONFIG_FILE;
  if (explicit === '/dev/null' || (platform === 'win32' && explicit?.toLowerCase() === 'nul')) return [];
  const files: string[] = set(explicit) ? [explicit] : [];
  if (platform === 'win32') {
    files.push(join(env.ProgramData ?? 'C:\\ProgramData', 'pip', 'pip.ini'));
    files.push(join(home, 'pip', 'pip.ini'));
    files.push(join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'pip', 'pip.ini'));
    if (set(env.VIRTUAL_ENV)) files.push(join(env.VIRTUAL_ENV, 'pip.ini'));
    return files;
  }
  if (platform === 'darwin') {
    files.push('/Library/Application Support/pip/pip.conf');
  } else {
    const dirs = set(env.XDG_CONFIG_DIRS) ? env.XDG_CONFIG_DIRS.split(delimiter).filter(Boolean) : ['/etc/xdg'];
    // In the order pip loads them (pip/_internal/utils/appdirs.py), the last one winning.
    for (const dir of dirs) files.push(join(dir, 'pip', 'pip.conf'));
    files.push('/etc/pip.conf');
  }
  files.push(join(home, '.pip', 'pip.conf'));
  const appSupport = join(home, 'Library', 'Application Support', 'pip');
  if (platform === 'darwin' && existsSync(appSupport)) files.push(join(appSupport, 'pip.conf'));
  else files.push(join(set(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config'), 'pip', 'pip.conf'));
  if (set(env.VIRTUAL_ENV)) files.push(join(env.VIRTUAL_ENV, 'pip.conf'));
  return files;
}

/**
 * Sections of an INI file as Python's configparser reads it: `key = value` or `key: value`,
 * comments on lines starting with # or ;, indented lines continuing the previous value (pip users
 * list several extra-index-url values that way, which the npm `ini` packages do not read).
 * Keys are lower-cased with `_` read as `-`, as pip normalises them.
 */
export function parsePipIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let section: Map<string, string> | undefined;
  let lastKey: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === '' || /^\s*[#;]/.test(raw)) {
      continue;
    }
    if (/^\s/.test(raw) && section !== undefined && lastKey !== undefined) {
      section.set(lastKey, `${section.get(lastKey) ?? ''}\n${raw.trim()}`.trim());
      continue;
    }
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(raw);
    if (header !== null) {
      const name = (header[1] ?? '').trim().toLowerCase();
      section = sections.get(name) ?? new Map<string, string>();
      sections.set(name, section);
      lastKey = undefined;
      continue;
    }
    const pair = keyValue(raw);
    if (pair === undefined || section === undefined) continue;
    lastKey = pair.key.toLowerCase().replace(/_/g, '-');
    section.set(lastKey, pair.value.trim());
  }
  return sections;
}

/**
 * A `key = value` or `key: value` line, read as `^\s*([^=:]+?)\s*[=:]\s*(.*)$` reads it (the first
 * `=` or `:` ends the key, which loses its spaces; a key of spaces alone keeps one; the value may hold
 * no line break), in one pass: that pattern tries every split of a run of spaces (issue 35).
 */
function keyValue(line: string): { key: string; value: string } | undefined {
  const at = line.search(/[=:]/);
  if (at < 1) return undefined;
  const before = line.slice(0, at);
  const value = line.slice(at + 1).trimStart();
  if (/[\n\r\u2028\u2029]/.test(value)) return undefined;
  return { key: before.trim() === '' ? before.slice(-1) : before.trim(), value };
}

const splitList = (value: string): string[] => value.split(/\s+/).filter(Boolean);
const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** Reads pip's files and environment into the settings a download needs. */
export function resolvePipSettings(where: PipEnvironment): PipSettings {
  const { env } = where;
  let indexUrl: string | undefined;
  let indexSource = 'default';
  let extra: string[] | undefined;
  let proxy: string | undefined;
  let cert: string | undefined;
  const filesRead: string[] = [];
  for (const file of pipConfigFiles(where)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // pip skips files that do not exist or cannot be read
    }
    filesRead.push(file);
    const sections = parsePipIni(text);
    for (const name of ['global', 'download']) {
      const s = sections.get(name);
      if (s === undefined) continue;
      const index = nonEmpty(s.get('index-url'));
      if (index !== undefined) {
        indexUrl = index;
        indexSource = file;
      }
      const more = s.get('extra-index-url');
      if (more !== undefined) extra = splitList(more);
      proxy = nonEmpty(s.get('proxy')) ?? proxy;
      cert = nonEmpty(s.get('cert')) ?? cert;
    }
  }
  const envIndex = nonEmpty(env.PIP_INDEX_URL);
  if (envIndex !== undefined) {
    indexUrl = envIndex;
    indexSource = 'PIP_INDEX_URL';
  }
  if (env.PIP_EXTRA_INDEX_URL !== undefined) extra = splitList(env.PIP_EXTRA_INDEX_URL);
  proxy = nonEmpty(env.PIP_PROXY) ?? proxy;
  cert = nonEmpty(env.PIP_CERT) ?? cert;
  return {
    indexUrl: indexUrl ?? DEFAULT_INDEX_URL,
    extraIndexUrls: extra ?? [],
    indexSource,
    proxy,
    // Lower-case first, as curl and Python's requests read them.
    httpsProxy: nonEmpty(env.https_proxy) ?? nonEmpty(env.HTTPS_PROXY),
    httpProxy: nonEmpty(env.http_proxy) ?? nonEmpty(env.HTTP_PROXY),
    noProxy: nonEmpty(env.no_proxy) ?? nonEmpty(env.NO_PROXY),
    cert,
    filesRead,
  };
}
