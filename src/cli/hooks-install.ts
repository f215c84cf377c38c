/**
 * `limbic hooks install|uninstall CLIENT`: writes (or removes) Limbic's lifecycle hooks in the
 * file the client reads them from, keeping everything else in it, after a backup; running it
 * again changes nothing. Each event gets a `command` hook running `limbic hook EVENT` by absolute
 * paths (docs/hooks.md):
 *
 * - Claude Code: `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`), a project's
 *   `.claude/settings.json` with --project; `hooks.<Event>[] = { matcher?, hooks: [handler] }`,
 *   timeouts in seconds.
 * - Codex: `~/.codex/hooks.json` (or `$CODEX_HOME/hooks.json`), a project's `.codex/hooks.json`;
 *   the same shape (Codex has no SessionEnd).
 * - Gemini CLI: `~/.gemini/settings.json`, a project's `.gemini/settings.json`; the same shape with
 *   its own event names, handlers named, timeouts in milliseconds.
 * - Cursor: `~/.cursor/hooks.json`, a project's `.cursor/hooks.json`; `{ version: 1, hooks: {
 *   sessionStart: [{ command }] } }`.
 * - VS Code runs the hooks of Claude Code's files (its `chat.hookFilesLocations` lists them by
 *   default), so `vscode` writes those rather than a second copy in `.github/hooks`.
 *
 * Limbic's handlers are known by their command (`…/dist/cli/hook.js … --client …`, or `limbic hook
 * … --client …` through npx); every other handler, group and key is left as it is.
 */
import { resolve } from 'node:path';
import { HOOK_CLIENTS, type HookClient, type HookEvent } from '../capture/hook-input.js';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import { isObject, pathsFor, quote, readJsonConfig, writeJsonConfig, type Json, type Launcher, type Where } from './connect.js';

type EntryFormat = 'claude' | 'gemini' | 'cursor';

export interface HookClientSpec {
  readonly id: HookClient;
  readonly label: string;
  readonly aliases: readonly string[];
  /** The file the client reads hooks from: the user's, or with `project` that project's. */
  file(where: Where, project: string | undefined): string;
  readonly format: EntryFormat;
  /** Our events, each under the client's name for it; an event the client lacks is absent. */
  readonly events: Readonly<Partial<Record<HookEvent, string>>>;
  /** The client whose file this one reads (VS Code reads Claude Code's). */
  readonly via?: HookClient | undefined;
  /** What to do for the change to take effect. */
  readonly restart: string;
  /** What the user should know about this client's hooks. */
  readonly notes: readonly string[];
}

const set = (v: string | undefined): v is string => v !== undefined && v !== '';

const CLAUDE_EVENTS = {
  'session-start': 'SessionStart',
  prompt: 'UserPromptSubmit',
  stop: 'Stop',
  'pre-compact': 'PreCompact',
  'session-end': 'SessionEnd',
} as const;

function claudeSettings(where: Where, project: string | undefined): string {
  const p = pathsFor(where.platform);
  if (project !== undefined) return p.join(project, '.claude', 'settings.json');
  return p.join(set(where.env.CLAUDE_CONFIG_DIR) ? where.env.CLAUDE_CONFIG_DIR : p.join(where.home, '.claude'), 'settings.json');
}

export const HOOK_CLIENT_SPECS: readonly HookClientSpec[] = [
  {
    id: 'claude-code',
    label: 'Claude Code',
    aliases: ['claude-code', 'claudecode', 'code-cli', 'claude'],
    file: claudeSettings,
    format: 'claude',
    events: CLAUDE_EVENTS,
    restart: 'Start a new Claude Code session (running ones keep the hooks they started with); /hooks lists them.',
    notes: [],
  },
  {
    id: 'codex',
    label: 'Codex',
    aliases: ['codex', 'codex-cli', 'openai-codex'],
    file: (where, project) => {
      const p = pathsFor(where.platform);
      if (project !== undefined) return p.join(project, '.codex', 'hooks.json');
      return p.join(set(where.env.CODEX_HOME) ? where.env.CODEX_HOME : p.join(where.home, '.codex'), 'hooks.json');
    },
    format: 'claude',
    events: { 'session-start': 'SessionStart', prompt: 'UserPromptSubmit', stop: 'Stop', 'pre-compact': 'PreCompact' },
    restart: 'Start a new Codex session; the desktop app lists new hooks under Settings → Hooks until you trust them.',
    notes: [
      'Codex has no SessionEnd hook: the last turn is captured at its Stop.',
      'Codex versions before hooks were on by default need `[features] hooks = true` (older: `codex_hooks = true`) in ~/.codex/config.toml.',
    ],
  },
  {
    id: 'gemini',
    label: 'Gemini CLI',
    aliases: ['gemini', 'gemini-cli', 'geminicli'],
    file: (where, project) => pathsFor(where.platform).join(project ?? where.home, '.gemini', 'settings.json'),
    format: 'gemini',
    events: {
      'session-start': 'SessionStart',
      prompt: 'BeforeAgent',
      stop: 'AfterAgent',
      'pre-compact': 'PreCompress',
      'session-end': 'SessionEnd',
    },
    restart: 'Start Gemini CLI again; `/hooks panel` lists the hooks.',
    notes: [
      'Gemini CLI versions that still gate hooks need them switched on: `/settings` → Advanced → Enable Hooks System (or `"hooksConfig": { "enabled": true }`).',
    ],
  },
  {
    id: 'cursor',
    label: 'Cursor',
    aliases: ['cursor'],
    file: (where, project) => pathsFor(where.platform).join(project ?? where.home, '.cursor', 'hooks.json'),
    format: 'cursor',
    events: {
      'session-start': 'sessionStart',
      prompt: 'beforeSubmitPrompt',
      reply: 'afterAgentResponse',
      stop: 'stop',
      'pre-compact': 'preCompact',
      'session-end': 'sessionEnd',
    },
    restart: 'Reload Cursor (or start a new agent chat); Settings → Hooks shows what it loaded.',
    notes: [
      'Cursor can also run Claude Code’s hooks (Settings → Features → Third-party skills): with both installed, each event runs twice — the memory stores each turn once, but the brief comes twice. Keep one.',
    ],
  },
  {
    id: 'vscode',
    label: 'VS Code',
    aliases: ['vscode', 'vs-code', 'code', 'visual-studio-code', 'copilot'],
    file: claudeSettings,
    format: 'claude',
    events: CLAUDE_EVENTS,
    via: 'claude-code',
    restart: 'VS Code picks the change up by itself (agent hooks are in preview); the “GitHub Copilot Chat Hooks” output shows them run.',
    notes: [
      'VS Code runs the hooks in Claude Code’s settings files (its chat.hookFilesLocations lists ~/.claude/settings.json and the workspace’s .claude/settings.json by default), so Limbic writes them there rather than a second copy; the same hooks serve Claude Code.',
      'VS Code gives a Stop hook no reply text and keeps its own transcript format: its prompts are captured, its replies are not.',
    ],
  },
];

export function findHookClient(name: string): HookClientSpec {
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
  const client = HOOK_CLIENT_SPECS.find((c) => c.id === key || c.aliases.includes(key));
  if (client === undefined) {
    throw new MemoryError(ERROR_CODES.INVALID_INPUT, `Unknown client "${name}". Choose one of: ${HOOK_CLIENTS.join(', ')}.`);
  }
  return client;
}

/** Seconds each event may run before the client stops it (Gemini CLI counts milliseconds); ours finish far sooner. */
export const HOOK_TIMEOUT_S: Readonly<Record<HookEvent, number>> = {
  'session-start': 10,
  prompt: 10,
  reply: 10,
  stop: 30,
  'pre-compact': 30,
  // Claude Code waits for SessionEnd hooks up to the largest timeout set (1.5 s when none): the hook hands its work to the background in well under a second.
  'session-end': 5,
};

/** A word for the shell a client runs hook commands in: POSIX quoting, or double quotes on Windows. */
function shellWord(word: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return quote(word);
  return /^[\w@%+=:,./\\-]+$/.test(word) ? word : `"${word.replace(/"/g, '\\"')}"`;
}

export interface HookCommandOptions {
  /** How this Limbic's hook.js starts (connect's thisLimbic with hook.js): node and the script, or npx. */
  readonly launcher: Launcher;
  /** Global options carried into the command (--db, --namespace), as words. */
  readonly globalArgs: readonly string[];
  readonly client: HookClient;
  /** Where the hooks keep their offsets and log. */
  readonly stateDir: string;
  readonly platform: NodeJS.Platform;
}

/** The command line of one event's hook. */
export function hookCommand(event: HookEvent, options: HookCommandOptions): string {
  const { launcher, platform } = options;
  // npx starts main.js (`limbic hook …`); node starts hook.js itself.
  const viaNpx = !launcher.args.some((a) => /[\\/]hook\.js$/.test(a));
  const words = [
    launcher.command,
    ...launcher.args,
    ...options.globalArgs,
    ...(viaNpx ? ['hook'] : []),
    event,
    '--client',
    options.client,
    '--state-dir',
    options.stateDir,
  ];
  const line = words.map((w) => shellWord(w, platform)).join(' ');
  const path = launcher.env?.PATH;
  // npx runs Limbic's bin through `#!/usr/bin/env node`: the hook needs this Node first on PATH, and hooks get no env field.
  return path !== undefined && platform !== 'win32' ? `PATH=${shellWord(path, platform)} ${line}` : line;
}

/** Whether a hook command is one of Limbic's (whatever version, path or event wrote it). */
export function isLimbicHookCommand(command: unknown): boolean {
  if (typeof command !== 'string' || !/\s--client\s/.test(command)) return false;
  return /[\\/]dist[\\/]cli[\\/]hook\.js\b/.test(command) || /\blimbic(\.cmd|\.exe)?["']?\s(?:.*\s)?hook\s/.test(command);
}

/** Our handler for one event, in the client's format. */
function handlerFor(spec: HookClientSpec, event: HookEvent, command: string): Json {
  const timeout = HOOK_TIMEOUT_S[event];
  switch (spec.format) {
    case 'claude':
      return { type: 'command', command, timeout };
    case 'gemini':
      return { name: `limbic-${event}`, type: 'command', command, timeout: timeout * 1000, description: `Limbic memory: ${event}` };
    case 'cursor':
      return { command };
    default: {
      const _exhaustive: never = spec.format;
      return _exhaustive;
    }
  }
}

const ours = (handler: unknown): boolean =>
  isObject(handler) && (isLimbicHookCommand(handler.command) || (typeof handler.name === 'string' && handler.name.startsWith('limbic-')));

/**
 * One event's list with our handler in it: an existing one of ours is replaced where it stands
 * (keeping its group's matcher and anything else), duplicates of it are dropped, and a list
 * without one gets a new entry at its end. `handler` undefined: ours are only removed, and a
 * group left empty by that goes too.
 */
function withHandler(format: EntryFormat, list: readonly unknown[], handler: Json | undefined): unknown[] {
  let placed = false;
  const place = (): Json[] => {
    if (handler === undefined || placed) return [];
    placed = true;
    return [handler];
  };
  const out: unknown[] = [];
  for (const item of list) {
    if (format === 'cursor') {
      if (ours(item)) out.push(...place());
      else out.push(item);
      continue;
    }
    if (!isObject(item) || !Array.isArray(item.hooks) || !item.hooks.some(ours)) {
      out.push(item);
      continue;
    }
    const hooks = item.hooks.flatMap((h) => (ours(h) ? place() : [h]));
    if (hooks.length > 0) out.push({ ...item, hooks });
  }
  if (handler !== undefined && !placed) out.push(format === 'cursor' ? handler : { hooks: [handler] });
  return out;
}

export interface HooksOptions {
  readonly client: HookClientSpec;
  readonly where: Where;
  /** A project's folder: its own settings file instead of the user's. */
  readonly project?: string | undefined;
  /** Overrides the file (a `.claude/settings.local.json`, say). */
  readonly configFile?: string | undefined;
  /** Show, write nothing. */
  readonly print?: boolean | undefined;
  /** For backup names; tests pass a fixed clock. @default Date.now */
  readonly now?: (() => number) | undefined;
}

export interface InstallOptions extends HooksOptions {
  readonly command: Omit<HookCommandOptions, 'client' | 'platform'>;
  /** The events to install (others of ours are removed): all the client has, less any switched off. */
  readonly events?: readonly HookEvent[] | undefined;
}

export interface HooksResult {
  readonly action: 'created' | 'updated' | 'unchanged' | 'printed' | 'removed' | 'absent';
  readonly file: string;
  /** Our handlers by the client's event name, as written (install) or removed (uninstall). */
  readonly hooks: Readonly<Record<string, Json>>;
  readonly backup: string | undefined;
  readonly messages: readonly string[];
}

function eventsObject(file: string, document: Json, handEdit: () => string): Json {
  const hooks = document.hooks ?? {};
  if (!isObject(hooks)) {
    throw new MemoryError(
      ERROR_CODES.CONFIG_INVALID,
      `"hooks" in ${file} is not an object, so Limbic left the file untouched. Fix it, or add Limbic's hooks by hand:\n${handEdit()}`,
    );
  }
  return hooks;
}

function fileOf(options: HooksOptions): string {
  return options.configFile ?? options.client.file(options.where, options.project === undefined ? undefined : resolve(options.project));
}

/** Writes Limbic's hooks into the client's file; see HooksResult. Throws a MemoryError rather than damage a file. */
export function installHooks(options: InstallOptions): HooksResult {
  const spec = options.client;
  const file = fileOf(options);
  const written = spec.via ?? spec.id;
  const wanted = (options.events ?? (Object.keys(spec.events) as HookEvent[])).filter((e) => spec.events[e] !== undefined);
  const handlers: Record<string, Json> = {};
  for (const event of wanted) {
    const name = spec.events[event] as string;
    handlers[name] = handlerFor(spec, event, hookCommand(event, { ...options.command, client: written, platform: options.where.platform }));
  }
  const shown = (): Json => ({
    ...(spec.format === 'cursor' ? { version: 1 } : {}),
    hooks: Object.fromEntries(Object.entries(handlers).map(([name, h]) => [name, spec.format === 'cursor' ? [h] : [{ hooks: [h] }]])),
  });
  const handEdit = (): string => JSON.stringify(shown(), null, 2);
  const messages: string[] = [...(options.command.launcher.note === undefined ? [] : [options.command.launcher.note]), ...spec.notes];

  const { exists, text, document } = readJsonConfig(file, handEdit);
  const hooks = eventsObject(file, document, handEdit);
  if (options.print === true) {
    messages.unshift(`Hooks for ${spec.label} (${file}), not written:`);
    return { action: 'printed', file, hooks: handlers, backup: undefined, messages };
  }

  const next: Json = { ...hooks };
  for (const [name, list] of Object.entries(hooks)) {
    if (Array.isArray(list) && !(name in handlers)) {
      const kept = withHandler(spec.format, list, undefined);
      if (kept.length === 0 && list.length > 0) delete next[name];
      else next[name] = kept;
    }
  }
  for (const [name, handler] of Object.entries(handlers)) {
    const list = hooks[name];
    if (list !== undefined && !Array.isArray(list)) {
      throw new MemoryError(
        ERROR_CODES.CONFIG_INVALID,
        `"hooks.${name}" in ${file} is not a list, so Limbic left the file untouched. Fix it, or add Limbic's hooks by hand:\n${handEdit()}`,
      );
    }
    next[name] = withHandler(spec.format, list ?? [], handler);
  }
  const nextDocument: Json = {
    ...(spec.format === 'cursor' && document.version === undefined ? { version: 1 } : {}),
    ...document,
    hooks: next,
  };
  if (JSON.stringify(nextDocument) === JSON.stringify(document)) {
    return {
      action: 'unchanged',
      file,
      hooks: handlers,
      backup: undefined,
      messages: [`Nothing to change: ${file} already has Limbic's hooks as they would be written.`, ...messages],
    };
  }
  const backup = writeJsonConfig(file, nextDocument, { exists, text }, (options.now ?? Date.now)(), options.where.platform);
  const action = exists ? 'updated' : 'created';
  messages.unshift(
    `${exists ? 'Wrote' : 'Created'} Limbic's hooks (${Object.keys(handlers).join(', ')}) in ${file}${backup === undefined ? '' : ` (backup: ${backup})`}.`,
    spec.restart,
  );
  return { action, file, hooks: handlers, backup, messages };
}

/** Removes Limbic's hooks from the client's file, and nothing else. */
export function uninstallHooks(options: HooksOptions): HooksResult {
  const spec = options.client;
  const file = fileOf(options);
  const { exists, text, document } = readJsonConfig(file, () => '(nothing to add: uninstall only removes)');
  const hooks = eventsObject(file, document, () => '(nothing to add)');
  const removed: Record<string, Json> = {};
  const next: Json = {};
  for (const [name, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) {
      next[name] = list;
      continue;
    }
    const kept = withHandler(spec.format, list, undefined);
    if (JSON.stringify(kept) !== JSON.stringify(list)) {
      const mine = list
        .flatMap((item) => (spec.format === 'cursor' ? [item] : isObject(item) && Array.isArray(item.hooks) ? item.hooks : []))
        .find(ours);
      if (isObject(mine)) removed[name] = mine;
    }
    if (kept.length > 0 || list.length === 0) next[name] = kept;
  }
  if (Object.keys(removed).length === 0) {
    return { action: 'absent', file, hooks: {}, backup: undefined, messages: [`Nothing to remove: ${file} has no Limbic hooks.`] };
  }
  if (options.print === true) {
    return {
      action: 'printed',
      file,
      hooks: removed,
      backup: undefined,
      messages: [`Would remove Limbic's hooks (${Object.keys(removed).join(', ')}) from ${file}; nothing written.`],
    };
  }
  const { hooks: _old, ...rest } = document;
  const nextDocument: Json = Object.keys(next).length === 0 ? rest : { ...document, hooks: next };
  const backup = writeJsonConfig(file, nextDocument, { exists, text }, (options.now ?? Date.now)(), options.where.platform);
  return {
    action: 'removed',
    file,
    hooks: removed,
    backup,
    messages: [
      `Removed Limbic's hooks (${Object.keys(removed).join(', ')}) from ${file}${backup === undefined ? '' : ` (backup: ${backup})`}; everything else in it is as it was.`,
      ...(spec.via === undefined
        ? []
        : [`They were ${HOOK_CLIENT_SPECS.find((c) => c.id === spec.via)?.label ?? spec.via}'s too: both stop capturing.`]),
    ],
  };
}
