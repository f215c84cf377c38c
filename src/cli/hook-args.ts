/**
 * The command line of `limbic hook EVENT` as the entries `limbic hooks install` writes call it:
 * `node …/dist/cli/hook.js [--db PATH] [--namespace NAME] [hook] EVENT --client CLIENT [--state-dir DIR]`.
 * Parsed by hand, not by commander: a hook's start-up is waited on (hook.ts), so this module loads
 * nothing but the event names.
 */
import { HOOK_CLIENTS, hookEventOf, type HookClient, type HookEvent } from '../capture/hook-input.js';
import type { GlobalOptions } from './app.js';

export interface HookArgs {
  /**
   * The global options the entry carries, as commander would give them to App: --db, --namespace
   * and --model-dir with their values, and any other as `--name=value`, `--flag` or `--no-flag`
   * (the installer writes them so; a setting added to the CLI later needs no change here).
   */
  readonly global: GlobalOptions & Record<string, string | boolean | undefined>;
  /** The event the entry was written for; undefined: take `hook_event_name` from the input. */
  readonly event: HookEvent | undefined;
  readonly client: HookClient;
  /** Where offsets, locks and the hook log live; the installer writes it (hooks do not see the shell's XDG_CACHE_HOME). */
  readonly stateDir: string | undefined;
  /**
   * How a capture event runs: `detach` (the default) hands the input to a background process and
   * exits at once; `foreground` captures before exiting (tests, benchmarks, a user trying it);
   * `worker` is that background process.
   */
  readonly mode: 'detach' | 'foreground' | 'worker';
  /** Words this version does not know (a newer installer's flags): ignored, and said once. */
  readonly ignored: readonly string[];
}

const VALUE_FLAGS = new Set(['--db', '--namespace', '--model-dir', '--client', '--state-dir']);

/**
 * Never throws: a hook must not fail on its own command line. An unknown client falls back to
 * claude-code (whose input readHookInput also recognises VS Code's and Cursor's by).
 */
export function parseHookArgs(argv: readonly string[]): HookArgs {
  const global: HookArgs['global'] = {};
  let event: HookEvent | undefined;
  let client: HookClient = 'claude-code';
  let stateDir: string | undefined;
  let mode: HookArgs['mode'] = 'detach';
  const ignored: string[] = [];
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    let value: string | undefined;
    if (VALUE_FLAGS.has(flag)) {
      value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) {
        ignored.push(arg);
        continue;
      }
    }
    switch (flag) {
      case '--db':
        global.db = value;
        break;
      case '--namespace':
        global.namespace = value;
        break;
      case '--model-dir':
        global.modelDir = value;
        break;
      case '--no-model':
        global.model = false;
        break;
      case '--inverse-relations':
        global.inverseRelations = true;
        break;
      case '--client': {
        const known = HOOK_CLIENTS.find((c) => c === value);
        if (known === undefined) ignored.push(`--client ${value ?? ''}`);
        else client = known;
        break;
      }
      case '--state-dir':
        stateDir = value;
        break;
      case '--foreground':
        if (mode !== 'worker') mode = 'foreground';
        break;
      case '--worker':
        mode = 'worker';
        break;
      default:
        if (/^--[a-z][a-z0-9-]*(=|$)/.test(arg)) setGlobal(global, flag.slice(2), eq > 0 ? arg.slice(eq + 1) : undefined);
        else if (arg.startsWith('-')) ignored.push(arg);
        else words.push(arg);
    }
  }
  // `limbic hook EVENT` (through main.js or npx) and `hook.js EVENT` both arrive here.
  if (words[0] === 'hook') words.shift();
  const [name, ...extra] = words;
  if (name !== undefined) {
    event = hookEventOf(name);
    if (event === undefined) ignored.push(name);
  }
  ignored.push(...extra);
  return { global, event, client, stateDir, mode, ignored };
}

const camel = (name: string): string => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** A global option as commander sets it: `--x=v` → x: 'v', `--x` → x: true, `--no-x` → x: false. */
function setGlobal(global: HookArgs['global'], name: string, value: string | undefined): void {
  if (value !== undefined) global[camel(name)] = value;
  else if (name.startsWith('no-')) global[camel(name.slice(3))] = false;
  else global[camel(name)] = true;
}

/** The command line again, for the background worker: the same words, with --worker. */
export function workerArgs(argv: readonly string[]): string[] {
  return [...argv.filter((a) => a !== '--foreground' && a !== '--worker'), '--worker'];
}
