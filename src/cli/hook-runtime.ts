/**
 * The part of `limbic hook EVENT` that opens the memory: the settings and the service come from
 * the App (the composition root), the rest from src/capture. hook.ts loads this module only when an
 * event needs it (SessionStart, or the background capture), so a hook that hands its capture to the
 * background never pays for it.
 */
import { existsSync } from 'node:fs';
import { cleanTurnText } from '../capture/clean-text.js';
import type { HookInput } from '../capture/hook-input.js';
import { captureEvent, sessionStart, type CaptureOutcome, type HookParts } from '../capture/hook-run.js';
import { HookState } from '../capture/hook-state.js';
import type { Logger } from '../core/logger.js';
import { App } from './app.js';
import type { HookArgs } from './hook-args.js';
import { readClaudeCodeTranscript } from '../capture/readers/claude-code.js';

/** SessionStart reads while a capture may write: it waits this long for the writer, then says nothing. */
export const BRIEF_BUSY_MS = 1_000;
/** A background capture waits this long for another writer before leaving its turns to the next event. */
export const CAPTURE_BUSY_MS = 5_000;

/** The hook's parts over the memory the entry names (its --db and --namespace, else the environment's). */
function partsFor(args: HookArgs, busyTimeoutMs: number): HookParts {
  const app = new App(() => args.global);
  const config = app.config();
  const state = new HookState(args.stateDir ?? config.hookStateDir);
  const logger = logTo(state);
  return {
    capture: config.capture,
    brief: config.brief,
    memoryId: `${config.dbPath}#${config.namespace}`,
    memoryExists: app.isPostgres(config.dbPath) || existsSync(config.dbPath),
    state,
    // No folder (a client that sends no cwd) is no project unless LIMBIC_PROJECT names one: its sessions stay global.
    resolveProject: (cwd) =>
      cwd === undefined && config.project === undefined ? Promise.resolve(undefined) : app.project(cwd ?? app.where().home),
    readTranscript: (path, fromOffset) => readClaudeCodeTranscript(path, { fromOffset }),
    cleanText: cleanTurnText,
    openMemory: () => {
      const service = app.lightService(config, { busyTimeoutMs, logger });
      return {
        brief: (project) => service.brief(project),
        capture: (conversation, project) => service.capture(conversation, project),
        close: () => service.close(),
      };
    },
    now: Date.now,
  };
}

/** A logger that writes warnings to the hook log (a hook's stderr is the client's, and the background's is the log's). */
function logTo(state: HookState): Logger {
  return {
    info: () => undefined,
    warn: (message, error) =>
      state.log(`warning: ${message}${error === undefined ? '' : `: ${String(error instanceof Error ? error.message : error)}`}`),
  };
}

/** SessionStart: what to print on stdout (empty for nothing). */
export async function runSessionStart(args: HookArgs, input: HookInput): Promise<string> {
  return sessionStart(input, args.client, partsFor(args, BRIEF_BUSY_MS));
}

/** A capture event, in this process: the background worker, or --foreground. */
export async function runCapture(args: HookArgs, input: HookInput): Promise<CaptureOutcome> {
  const parts = partsFor(args, CAPTURE_BUSY_MS);
  const outcome = await captureEvent(input, parts);
  if (outcome.done === 'busy')
    parts.state.log(`${input.event} ${input.client}: another hook of this session held it too long; the next event captures these turns`);
  if (args.mode === 'worker') parts.state.prune();
  return outcome;
}
