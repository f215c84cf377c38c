/**
 * `limbic hooks install|uninstall CLIENT` (../hooks-install.ts does the work) and the hidden
 * `limbic hook EVENT` the installed hooks run (../hook.ts; the entries start hook.js directly, so
 * this command is the same runtime reached through the whole CLI, for a user trying a hook by hand
 * or an npx install).
 */
import type { Command } from 'commander';
import { DEFAULT_NAMESPACE } from '../../http/namespaces.js';
import type { HookEvent } from '../../capture/hook-input.js';
import type { App, GlobalOptions } from '../app.js';
import { print } from '../output.js';

interface HooksCommandOptions {
  project?: string | boolean;
  config?: string;
  print?: boolean;
  capture?: boolean;
  brief?: boolean;
}

/** The global options a command line carries on to a hook: the memory it writes to. */
function globalWords(options: GlobalOptions): string[] {
  return [
    ...(options.db === undefined ? [] : ['--db', options.db]),
    ...(options.namespace === undefined ? [] : ['--namespace', options.namespace]),
    ...(options.modelDir === undefined ? [] : ['--model-dir', options.modelDir]),
    ...(options.model === false ? ['--no-model'] : []),
    ...(options.inverseRelations === true ? ['--inverse-relations'] : []),
  ];
}

/**
 * The global options given on this command line (not their defaults) that a hook must carry, as
 * `--flag`, `--no-flag` or `--name=value`: --no-redact, --redact-pii, --inverse-relations… (hook-args.ts
 * reads them back the way commander set them). --db and --namespace come from the resolved
 * settings instead (their variables count too); the model's options do not matter to a hook.
 */
function carriedOptions(program: Command): string[] {
  const words: string[] = [];
  const given = program.opts<Record<string, unknown>>();
  for (const option of program.options) {
    const key = option.attributeName();
    if (['db', 'namespace', 'modelDir', 'model'].includes(key) || program.getOptionValueSource(key) !== 'cli' || option.long === undefined)
      continue;
    const value = given[key];
    if (option.negate) {
      if (value === false) words.push(option.long);
    } else if (typeof value === 'string') words.push(`${option.long}=${value}`);
    else if (value === true) words.push(option.long);
  }
  return words;
}

export function registerHooksCommands(program: Command, app: App): void {
  const hooks = program
    .command('hooks')
    .description(
      "fill the memory from a coding agent's own sessions: install or remove its lifecycle hooks (claude-code, codex, gemini, cursor, vscode)",
    );

  const projectOf = (o: HooksCommandOptions): string | undefined =>
    o.project === undefined || o.project === false ? undefined : o.project === true ? process.cwd() : o.project;

  hooks
    .command('install')
    .description("add Limbic's hooks to a client's settings (keeps the rest, backs it up first; running it again changes nothing)")
    .argument('<client>', 'claude-code, codex, gemini, cursor or vscode')
    .option('--project [dir]', "the project's own settings file (in dir, default the current folder) instead of the user's")
    .option('--config <file>', 'write this file instead (a .claude/settings.local.json, say)')
    .option('--print', 'show the hooks instead of writing them')
    .option('--no-capture', 'only the brief at session start: store nothing from the sessions')
    .option('--no-brief', 'only the capture: no brief at session start')
    .action(async (clientName: string, o: HooksCommandOptions) => {
      const { findHookClient, installHooks } = await import('../hooks-install.js');
      const { thisLimbic } = await import('../connect.js');
      const { resolve } = await import('node:path');
      const client = findHookClient(clientName);
      const where = app.where();
      const root = app.rootConfig();
      // A chosen database and namespace go into the commands: a client's hooks do not see the shell's LIMBIC_DB.
      const db = app.chosenDb();
      const globalArgs = [
        ...(db === undefined ? [] : ['--db', db]),
        ...(root.namespace === DEFAULT_NAMESPACE ? [] : ['--namespace', root.namespace]),
        ...carriedOptions(program),
      ];
      const events = (Object.keys(client.events) as HookEvent[]).filter((e) =>
        e === 'session-start' ? o.brief !== false : o.capture !== false,
      );
      const result = installHooks({
        client,
        where,
        project: projectOf(o),
        configFile: o.config === undefined ? undefined : resolve(o.config),
        print: o.print === true,
        events,
        command: {
          launcher: thisLimbic(new URL('../hook.js', import.meta.url).href, process.execPath, where.env),
          globalArgs,
          stateDir: root.hookStateDir,
        },
      });
      if (result.action === 'printed') print({ file: result.file, hooks: result.hooks });
      for (const line of result.messages) process.stderr.write(`limbic: ${line}\n`);
    });

  hooks
    .command('uninstall')
    .description("remove Limbic's hooks from a client's settings, and nothing else")
    .argument('<client>', 'claude-code, codex, gemini, cursor or vscode')
    .option('--project [dir]', "the project's own settings file instead of the user's")
    .option('--config <file>', 'remove them from this file instead')
    .option('--print', 'say what would be removed, remove nothing')
    .action(async (clientName: string, o: HooksCommandOptions) => {
      const { findHookClient, uninstallHooks } = await import('../hooks-install.js');
      const { resolve } = await import('node:path');
      const result = uninstallHooks({
        client: findHookClient(clientName),
        where: app.where(),
        project: projectOf(o),
        configFile: o.config === undefined ? undefined : resolve(o.config),
        print: o.print === true,
      });
      if (result.action === 'printed') print({ file: result.file, hooks: result.hooks });
      for (const line of result.messages) process.stderr.write(`limbic: ${line}\n`);
    });

  program
    .command('hook', { hidden: true })
    .description('run one lifecycle hook: the event JSON on stdin (what the installed hooks call)')
    .argument('[event]', 'session-start, prompt, reply, stop, pre-compact or session-end (or the client’s own name)')
    .option('--client <client>', 'whose hook file holds the entry', 'claude-code')
    .option('--state-dir <dir>', 'where offsets and the hook log live')
    .option('--foreground', 'capture before exiting instead of in the background')
    .option('--worker', 'be the background capture (internal)')
    .action(async (event: string | undefined, o: { client: string; stateDir?: string; foreground?: boolean; worker?: boolean }) => {
      const { main } = await import('../hook.js');
      await main([
        ...globalWords(program.opts<GlobalOptions>()),
        ...(event === undefined ? [] : [event]),
        '--client',
        o.client,
        ...(o.stateDir === undefined ? [] : ['--state-dir', o.stateDir]),
        ...(o.foreground === true ? ['--foreground'] : []),
        ...(o.worker === true ? ['--worker'] : []),
      ]);
    });
}
