/**
 * `limbic connect CLIENT`: adds (or updates) the Limbic entry in an MCP client's own config file,
 * keeping everything else in it, after a backup. Running it again changes nothing.
 *
 * Where each client keeps its servers (user level, so every project sees the memory):
 * - Claude Desktop: claude_desktop_config.json in ~/Library/Application Support/Claude (macOS),
 *   %APPDATA%\Claude (Windows), $XDG_CONFIG_HOME/Claude (Linux builds); key `mcpServers`.
 * - Claude Code: ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json), top-level `mcpServers`: the
 *   file `claude mcp add --scope user` writes.
 * - Cursor: ~/.cursor/mcp.json, `mcpServers`.
 * - VS Code: mcp.json in the user profile (~/Library/Application Support/Code/User, %APPDATA%\Code\User,
 *   $XDG_CONFIG_HOME/Code/User), key `servers`, entries with `"type": "stdio"`.
 * - Windsurf: ~/.codeium/windsurf/mcp_config.json, `mcpServers`.
 */
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, join, posix, resolve, sep, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, MemoryError } from '../core/errors.js';

export interface Where {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly platform: NodeJS.Platform;
}

export interface ClientSpec {
  readonly id: string;
  readonly label: string;
  readonly aliases: readonly string[];
  /** The object in the file that maps server names to entries. */
  readonly serversKey: 'mcpServers' | 'servers';
  /** Whether entries carry `"type": "stdio"` (VS Code requires it; Claude Code writes it). */
  readonly typed: boolean;
  configPath(where: Where): string;
  /** What to do after the file changed. */
  readonly restart: string;
}

const set = (v: string | undefined): v is string => v !== undefined && v !== '';
export const pathsFor = (platform: NodeJS.Platform) => (platform === 'win32' ? win32 : posix);
const appData = ({ env, home, platform }: Where): string =>
  set(env.APPDATA) ? env.APPDATA : pathsFor(platform).join(home, 'AppData', 'Roaming');
const xdgConfig = ({ env, home, platform }: Where): string =>
  set(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : pathsFor(platform).join(home, '.config');

/** The per-user application folder of an Electron app named `name`. */
function appFolder(where: Where, name: string): string {
  const p = pathsFor(where.platform);
  if (where.platform === 'darwin') return p.join(where.home, 'Library', 'Application Support', name);
  if (where.platform === 'win32') return p.join(appData(where), name);
  return p.join(xdgConfig(where), name);
}

export const CLIENTS: readonly ClientSpec[] = [
  {
    id: 'claude-desktop',
    label: 'Claude Desktop',
    aliases: ['claude-desktop', 'claudedesktop', 'desktop'],
    serversKey: 'mcpServers',
    typed: false,
    configPath: (w) => pathsFor(w.platform).join(appFolder(w, 'Claude'), 'claude_desktop_config.json'),
    restart: 'Quit Claude Desktop completely and start it again.',
  },
  {
    id: 'claude-code',
    label: 'Claude Code',
    aliases: ['claude-code', 'claudecode', 'code-cli'],
    serversKey: 'mcpServers',
    typed: true,
    configPath: (w) => pathsFor(w.platform).join(set(w.env.CLAUDE_CONFIG_DIR) ? w.env.CLAUDE_CONFIG_DIR : w.home, '.claude.json'),
    restart: 'Start a new Claude Code session (running sessions keep the servers they started with); /mcp lists it.',
  },
  {
    id: 'cursor',
    label: 'Cursor',
    aliases: ['cursor'],
    serversKey: 'mcpServers',
    typed: false,
    configPath: (w) => pathsFor(w.platform).join(w.home, '.cursor', 'mcp.json'),
    restart: 'Reload Cursor (or switch the server on in its MCP settings).',
  },
  {
    id: 'vscode',
    label: 'VS Code',
    aliases: ['vscode', 'vs-code', 'code', 'visual-studio-code'],
    serversKey: 'servers',
    typed: true,
    configPath: (w) => pathsFor(w.platform).join(appFolder(w, 'Code'), 'User', 'mcp.json'),
    restart: 'VS Code picks the change up by itself; start the server from the MCP view or the mcp.json code lens if it waits.',
  },
  {
    id: 'windsurf',
    label: 'Windsurf',
    aliases: ['windsurf', 'codeium'],
    serversKey: 'mcpServers',
    typed: false,
    configPath: (w) => pathsFor(w.platform).join(w.home, '.codeium', 'windsurf', 'mcp_config.json'),
    restart: 'Press refresh in the Cascade MCP panel, or restart Windsurf.',
  },
];

export function findClient(name: string): ClientSpec {
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
  // `claude` is Claude Code's command and Claude Desktop's name: guessing would write the wrong file (issue 25).
  if (key === 'claude')
    throw new MemoryError(
      ERROR_CODES.INVALID_INPUT,
      '"claude" could be Claude Code (the `claude` command) or Claude Desktop: say "limbic connect claude-code" or "limbic connect claude-desktop".',
    );
  const client = CLIENTS.find((c) => c.aliases.includes(key) || c.id === key);
  if (client === undefined) {
    throw new MemoryError(ERROR_CODES.INVALID_INPUT, `Unknown client "${name}". Choose one of: ${CLIENTS.map((c) => c.id).join(', ')}.`);
  }
  return client;
}

/** How a client starts this Limbic. */
export interface Launcher {
  readonly command: string;
  readonly args: readonly string[];
  /** Environment the entry sets (npx needs this Node on PATH to run Limbic's bin). */
  readonly env?: Readonly<Record<string, string>>;
  /** Said to the user once the entry is written. */
  readonly note?: string;
}

/**
 * This Limbic as a client should start it: this Node (the one its native modules were built for)
 * and the real path of dist/cli/main.js. Absolute paths, not `limbic` from PATH: GUI clients
 * (Claude Desktop, Cursor started from a dock) do not get the shell's PATH, so `limbic` or `node`
 * installed through nvm is "command not found" there.
 */
export function thisLimbic(mainModuleUrl: string, nodePath: string, env: Where['env'] = {}): Launcher {
  const main = realpathSync(fileURLToPath(mainModuleUrl));
  return npxLauncher(main, nodePath, env) ?? { command: nodePath, args: [main] };
}

/**
 * The PATH an npx entry needs: this Node's folder (npx runs Limbic's bin through
 * `#!/usr/bin/env node`, and GUI clients do not see the shell's PATH), then the system's own
 * folders for the shell npm runs bins with. Not the PATH `connect` itself ran with: under npx that
 * is npm's run-time PATH (the npx cache's and the working folder's node_modules/.bin, npm's
 * node-gyp-bin …), which means nothing to the client and would be frozen into its config (issue 33).
 */
export function npxPath(nodePath: string, env: Where['env'] = {}): string {
  const windows = sep === '\\';
  const root = env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows';
  const system = windows ? [join(root, 'System32'), root] : ['/usr/local/bin', '/usr/bin', '/bin'];
  return [...new Set([dirname(nodePath), ...system])].join(delimiter);
}

/**
 * A Limbic that npx started runs from npx's cache (`<npm cache>/_npx/<hash>/node_modules/limbic`),
 * which `npm cache clean` deletes: an entry naming that main.js would break then. Such a Limbic is
 * started the way npx started it, with the package it was given (a tarball's path made absolute),
 * so a cleared cache is filled again at the next start, with only the PATH it needs (npxPath).
 * What such an entry still depends on (the tarball staying where it is, or the registry and a
 * slower first start) is said in its note, with the install that depends on neither: a global
 * install, after which `limbic connect` writes an entry naming its main.js.
 * ONNXRUNTIME_NODE_INSTALL=skip in the entry's environment: onnxruntime-node's installer would
 * download CUDA libraries that Limbic never loads (npm's `--onnxruntime-node-install=skip` does the
 * same, but npm 11 warns of an unknown setting on every start, issue 33). Undefined when this
 * Limbic is not in an npx cache.
 */
export function npxLauncher(mainPath: string, nodePath: string, env: Where['env'] = {}): Launcher | undefined {
  const parts = mainPath.split(sep);
  const at = parts.lastIndexOf('_npx');
  if (at < 0 || at + 2 >= parts.length) return undefined;
  const root = parts.slice(0, at + 2).join(sep);
  let wanted: unknown;
  try {
    wanted = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, unknown> }).dependencies
      ?.limbic;
  } catch {
    return undefined;
  }
  if (typeof wanted !== 'string' || wanted === '') return undefined;
  const spec = wanted.startsWith('file:')
    ? `file:${resolve(root, wanted.slice('file:'.length))}`
    : /^[a-z+]+:/i.test(wanted)
      ? wanted
      : `limbic@${wanted}`;
  const npx = join(dirname(nodePath), 'npx');
  let npxCli: string | undefined;
  try {
    npxCli = realpathSync(npx);
  } catch {
    npxCli = undefined;
  }
  const viaNode = npxCli !== undefined && npxCli.endsWith('.js');
  const npxArgs = ['--yes', `--package=${spec}`, '--', 'limbic'];
  const tarball = spec.startsWith('file:') ? spec.slice('file:'.length) : undefined;
  const install = `ONNXRUNTIME_NODE_INSTALL=skip npm i -g ${quote(tarball ?? spec)}`;
  return {
    command: viaNode ? nodePath : npxCli === undefined ? 'npx' : npx,
    args: viaNode ? [npxCli as string, ...npxArgs] : npxArgs,
    env: { PATH: npxPath(nodePath, env), ONNXRUNTIME_NODE_INSTALL: 'skip' },
    note:
      `this Limbic runs from npx's cache, which "npm cache clean" deletes; the entry starts it through npx with ${spec}, so a cleared cache costs a reinstall at the next start` +
      (tarball === undefined ? ' (from the registry)' : `, from that file: keep ${tarball} where it is`) +
      `. For an entry that depends on neither and starts at once, install Limbic and connect again: ${install}, then "limbic connect" with the same options`,
  };
}

/** Whether `name` is an executable on PATH (with PATHEXT on Windows). */
export function onPath(name: string, where: Where): boolean {
  const p = pathsFor(where.platform);
  const exts = where.platform === 'win32' ? (where.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  const dirs = (where.env.PATH ?? where.env.Path ?? '').split(where.platform === 'win32' ? ';' : delimiter).filter(Boolean);
  return dirs.some((dir) =>
    exts.some((ext) => {
      try {
        accessSync(p.join(dir, name + ext.toLowerCase()), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }),
  );
}

export interface ConnectOptions {
  readonly client: ClientSpec;
  readonly launcher: Launcher;
  /** Server name in the client. @default "memory" */
  readonly name?: string;
  /** Database the server opens; absent: Limbic's default location. */
  readonly db?: string;
  /** Namespace the server opens (--namespace); absent: the default one. */
  readonly namespace?: string;
  /** Tool profile the server serves (--tools); absent: every tool. */
  readonly tools?: string;
  /** Overrides the client's config file. */
  readonly configFile?: string;
  /** Show the entry, write nothing. */
  readonly print?: boolean;
  /** Replace an entry of that name that runs a server other than Limbic or the official one. */
  readonly replace?: boolean;
  readonly where: Where;
  /** How `limbic` is typed in the import command suggested after replacing the official server. */
  readonly limbicCommand?: string;
  /** For backup names; tests pass a fixed clock. @default Date.now */
  readonly now?: () => number;
}

export interface ConnectResult {
  readonly action: 'created' | 'added' | 'updated' | 'unchanged' | 'printed';
  readonly file: string;
  readonly serversKey: string;
  readonly name: string;
  readonly entry: Record<string, unknown>;
  readonly backup: string | undefined;
  /** Set when the entry replaced (or would replace) the official memory server. */
  readonly official: { readonly memoryFile: string | undefined; readonly importCommand: string; readonly note: string } | undefined;
  /** What to tell the user, line by line. */
  readonly messages: readonly string[];
}

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys that say how a server is started: ours replace them; anything else in an entry is the client's and is kept. */
const LAUNCH_KEYS = ['type', 'command', 'args', 'env', 'envFile', 'cwd', 'url', 'serverUrl', 'headers', 'transport'];

const OFFICIAL_PACKAGE = '@modelcontextprotocol/server-memory';

function runsOfficialServer(entry: unknown): boolean {
  if (!isObject(entry)) return false;
  const parts = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].filter((p): p is string => typeof p === 'string');
  return parts.some((p) => p.includes(OFFICIAL_PACKAGE) || /[\\/]server-memory[\\/]dist[\\/]index\.js$/.test(p));
}

/** An entry starting this Limbic (its main.js), or any Limbic by its command name or install folder. */
function runsLimbic(entry: unknown, launcher: Launcher): boolean {
  if (!isObject(entry)) return false;
  const parts = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].filter((p): p is string => typeof p === 'string');
  return parts.some(
    (p) => launcher.args.includes(p) || /(^|[\\/])limbic(\.cmd|\.exe)?$/i.test(p) || /limbic[\\/]dist[\\/]cli[\\/]main\.js$/i.test(p),
  );
}

/** A word for a POSIX shell: quoted when it needs to be. */
export const quote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, '\\$1')}"`);

/**
 * Where the official server keeps its graph: MEMORY_FILE_PATH from its entry (relative paths are
 * relative to its dist folder, which we cannot know), else memory.jsonl beside its dist/index.js in
 * the npx cache.
 */
function officialMemoryFile(entry: Json, where: Where): { file: string | undefined; note: string } {
  const env = isObject(entry.env) ? entry.env : {};
  const configured = typeof env.MEMORY_FILE_PATH === 'string' ? env.MEMORY_FILE_PATH : undefined;
  const p = pathsFor(where.platform);
  if (configured !== undefined) {
    if (p.isAbsolute(configured)) return { file: configured, note: `its MEMORY_FILE_PATH` };
    return {
      file: undefined,
      note: `its MEMORY_FILE_PATH is relative (${configured}): it lies in the server's dist folder inside the npx cache`,
    };
  }
  const npxCache = p.join(
    set(where.env.npm_config_cache)
      ? where.env.npm_config_cache
      : p.join(where.home, where.platform === 'win32' ? p.join('AppData', 'Local', 'npm-cache') : '.npm'),
    '_npx',
  );
  try {
    for (const dir of readdirSync(npxCache)) {
      const dist = p.join(npxCache, dir, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist');
      for (const name of ['memory.jsonl', 'memory.json']) {
        const file = p.join(dist, name);
        if (existsSync(file)) return { file, note: 'found in the npx cache' };
      }
    }
  } catch {
    // No npx cache: nothing to find.
  }
  return { file: undefined, note: `no MEMORY_FILE_PATH and no memory.jsonl under ${npxCache}` };
}

/** The indentation a JSON file uses, so a re-serialised file keeps its look. */
function indentOf(text: string): string | number {
  const line = /\n([ \t]+)\S/.exec(text);
  return line?.[1] ?? 2;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function timestamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** A client's JSON config file as read: whether it exists, its text, and its object ({} when missing or empty). */
export interface JsonConfig {
  readonly exists: boolean;
  readonly text: string;
  readonly document: Json;
}

/**
 * Reads a client's JSON config file. Throws CONFIG_INVALID, leaving the file untouched, when it is
 * not plain JSON (comments, trailing commas) or not an object; `handEdit` is what to paste instead.
 */
export function readJsonConfig(file: string, handEdit: () => string): JsonConfig {
  const exists = existsSync(file);
  const text = exists ? readFileSync(file, 'utf8') : '';
  if (text.trim() === '') return { exists, text, document: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `${file} is not valid JSON (${(cause as Error).message}${/\/\/|\/\*|,\s*[}\]]/.test(text) ? '; it looks like it has comments or trailing commas' : ''}), so Limbic left it untouched. ` +
        `Fix it, or add the entry by hand:\n${handEdit()}`,
      { cause },
    );
  }
  if (!isObject(parsed)) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `${file} holds JSON but not an object, so Limbic left it untouched. Add the entry by hand:\n${handEdit()}`,
    );
  }
  return { exists, text, document: parsed };
}

/**
 * Writes `next` over a config file read by readJsonConfig: a backup of the old file first
 * (`<file>.bak-<time>`, returned), its indentation, final newline and mode kept, replaced in one
 * rename so a client never reads half a file. A missing file gets its folder made.
 */
export function writeJsonConfig(
  file: string,
  next: Json,
  previous: Pick<JsonConfig, 'exists' | 'text'>,
  now: number,
  platform: NodeJS.Platform,
): string | undefined {
  let backup: string | undefined;
  if (previous.exists) {
    backup = `${file}.bak-${timestamp(now)}`;
    copyFileSync(file, backup);
  } else {
    mkdirSync(pathsFor(platform).dirname(file), { recursive: true });
  }
  const temp = `${file}.limbic-${process.pid}.tmp`;
  const { text } = previous;
  writeFileSync(temp, `${JSON.stringify(next, null, indentOf(text))}${text === '' || text.endsWith('\n') ? '\n' : ''}`);
  // The file may hold secrets (API keys of other servers): the new one keeps the old one's mode.
  if (previous.exists) chmodSync(temp, statSync(file).mode & 0o777);
  renameSync(temp, file);
  return backup;
}

/** Adds or updates the entry; see ConnectResult for what happened. Throws a MemoryError rather than damage a file. */
export function connectClient(options: ConnectOptions): ConnectResult {
  const { client, where } = options;
  const name = options.name ?? 'memory';
  const file = options.configFile ?? client.configPath(where);
  const args = [
    ...options.launcher.args,
    ...(options.db === undefined ? [] : ['--db', options.db]),
    ...(options.namespace === undefined ? [] : ['--namespace', options.namespace]),
    ...(options.tools === undefined ? [] : ['--tools', options.tools]),
  ];
  const env = options.launcher.env === undefined ? {} : { env: { ...options.launcher.env } };
  const launch: Json = client.typed
    ? { type: 'stdio', command: options.launcher.command, args, ...env }
    : { command: options.launcher.command, args, ...env };
  const limbic = options.limbicCommand ?? 'limbic';
  const handEdit = (): string => `${JSON.stringify({ [client.serversKey]: { [name]: launch } }, null, 2)}`;

  const { exists, text, document } = readJsonConfig(file, handEdit);
  const servers = document[client.serversKey] ?? {};
  if (!isObject(servers)) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `"${client.serversKey}" in ${file} is not an object, so Limbic left the file untouched. Fix it, or add the entry by hand:\n${handEdit()}`,
    );
  }
  const previous = servers[name];
  const official = runsOfficialServer(previous) && isObject(previous) ? previous : undefined;
  // The client's own flags (disabled, autoApprove, …) stay; how the server starts is ours. An earlier
  // Limbic entry also keeps its env (a user's LIMBIC_MODEL, say); another server's env does not.
  const kept = isObject(previous)
    ? Object.fromEntries(
        Object.entries(previous).filter(([k]) => !LAUNCH_KEYS.includes(k) || (k === 'env' && runsLimbic(previous, options.launcher))),
      )
    : {};
  const entry: Json = { ...launch, ...kept };

  const messages: string[] = options.launcher.note === undefined ? [] : [options.launcher.note];
  let officialReport: ConnectResult['official'];
  if (official !== undefined) {
    const found = officialMemoryFile(official, where);
    const command = `${limbic}${options.db === undefined ? '' : ` --db ${quote(options.db)}`} import ${found.file === undefined ? '/path/to/memory.jsonl' : quote(found.file)}`;
    officialReport = { memoryFile: found.file, importCommand: command, note: found.note };
    messages.push(
      `"${name}" ran the official memory server (${OFFICIAL_PACKAGE}); Limbic takes its place with the same tools.`,
      found.file === undefined
        ? `Its memory file was not found (${found.note}). Import it when you have found it: ${command}`
        : `Bring its memory over (${found.note}; safe to run twice): ${command}`,
    );
  } else if (previous !== undefined && !runsLimbic(previous, options.launcher)) {
    if (options.replace !== true && options.print !== true) {
      throw new MemoryError(
        ERROR_CODES.INVALID_INPUT,
        `${file} already has a server named "${name}" that is not Limbic (${JSON.stringify(previous)}); nothing was changed. ` +
          'Pass --name limbic to add Limbic beside it, or --replace to put Limbic in its place.',
      );
    }
    messages.push(`"${name}" starts another server now (${JSON.stringify(previous)}); Limbic replaces it.`);
  }

  if (options.print === true) {
    messages.unshift(`Entry for ${client.label} (${file}, under "${client.serversKey}"), not written:`);
    if (client.id === 'claude-code') {
      messages.push(`Or let Claude Code write it: claude mcp add-json --scope user ${name} ${quote(JSON.stringify(launch))}`);
    }
    return { action: 'printed', file, serversKey: client.serversKey, name, entry, backup: undefined, official: officialReport, messages };
  }

  if (previous !== undefined && same(previous, entry)) {
    return {
      action: 'unchanged',
      file,
      serversKey: client.serversKey,
      name,
      entry,
      backup: undefined,
      official: undefined,
      messages: [`Nothing to change: ${file} already has "${name}" starting this Limbic.`],
    };
  }

  // Assigning an existing key keeps its place; a new server goes last. Everything else is untouched.
  const nextServers = { ...servers, [name]: entry };
  const next = { ...document, [client.serversKey]: nextServers };
  const backup = writeJsonConfig(file, next, { exists, text }, (options.now ?? Date.now)(), where.platform);
  const action = !exists ? 'created' : previous === undefined ? 'added' : 'updated';
  messages.unshift(
    `${action === 'created' ? 'Created' : action === 'added' ? 'Added' : 'Updated'} "${name}" in ${file}${backup === undefined ? '' : ` (backup: ${backup})`}.`,
    client.restart,
  );
  return { action, file, serversKey: client.serversKey, name, entry, backup, official: officialReport, messages };
}
