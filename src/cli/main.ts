#!/usr/bin/env node
/**
 * The `limbic` command: its global flags, one registration per command (src/cli/commands/, plus
 * token.ts, auth-code.ts and migrate.ts), and the unknown-command check. What the commands build comes from the
 * App (app.ts, the composition root), which alone reads the environment and names the backends.
 */
import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import { namespaceDbPath, tokenFilePath } from '../http/namespaces.js';
import { App, type GlobalOptions } from './app.js';
import { registerAuthCommands } from './auth-code.js';
import { registerBriefCommand } from './commands/brief.js';
import { registerConnectCommand } from './commands/connect.js';
import { registerConsolidateCommand } from './commands/consolidate.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerExportCommand } from './commands/export.js';
import { registerHooksCommands } from './commands/hooks.js';
import { registerImportCommand } from './commands/import.js';
import { registerModelCommands } from './commands/model.js';
import { registerProjectsCommand } from './commands/projects.js';
import { registerReembedCommand } from './commands/reembed.js';
import { registerRedactCommand } from './commands/redact.js';
import { registerSearchCommand } from './commands/search.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatsCommand } from './commands/stats.js';
import { registerTuneCommand } from './commands/tune.js';
import { refuseUnknownCommands } from './did-you-mean.js';
import { registerMigrateCommand } from './migrate.js';
import { fail } from './output.js';
import { registerTokenCommands } from './token.js';

const program = new Command();
const app = new App(() => program.opts<GlobalOptions>());
program
  .name('limbic')
  .description('Long-term memory for AI agents: an MCP server over a knowledge graph in one SQLite file.')
  .version(app.info.version)
  .addOption(new Option('--db <path>', 'database file or postgres:// URL (env LIMBIC_DB; default $XDG_DATA_HOME/limbic/memory.db)'))
  .addOption(new Option('--model-dir <dir>', 'folder holding an embedding model (env LIMBIC_MODEL_DIR)'))
  .addOption(new Option('--no-model', 'run without the embedding model: keyword search only (env LIMBIC_NO_MODEL=1)'))
  .addOption(
    new Option(
      '--inverse-relations',
      'create and delete hierarchical relations in pairs: A contains B also makes B part_of A (env LIMBIC_INVERSE_RELATIONS=1)',
    ),
  )
  .addOption(new Option('--no-redact', 'store text as given: no secret redaction before writes (env LIMBIC_NO_REDACT=1)'))
  .addOption(new Option('--redact-pii', 'also redact e-mail addresses and phone numbers (env LIMBIC_REDACT_PII=1)'))
  .addOption(
    new Option(
      '--tools <profile>',
      'which tools to serve: all (default) or core, the official nine and search_semantic, for a smaller tool list (env LIMBIC_TOOLS)',
    ),
  )
  .addOption(
    new Option(
      '--namespace <name>',
      'which memory: "default" is the --db file, others live beside it (PostgreSQL: schema limbic_<name>) (env LIMBIC_NAMESPACE); serve --http takes it from each token',
    ),
  )
  .showHelpAfterError();

registerServeCommand(program, app);
const tokenDeps = {
  dbPath: () => app.rootConfig().dbPath,
  openTokens: (location: string) => app.openTokens(location),
  fail,
  globalNamespace: () => app.rootConfig().namespace,
};
registerTokenCommands(program, tokenDeps);
registerAuthCommands(program, tokenDeps);
registerMigrateCommand(program, {
  openStore: (location, namespace) => app.openStore(namespaceDbPath(app.checkLocation(location), namespace), namespace),
  namespaces: (location) => app.namespacesAt(app.checkLocation(location)),
  namespace: () => app.rootConfig().namespace,
  openTokens: (location, create) => {
    const path = tokenFilePath(app.checkLocation(location));
    return create || app.isPostgres(path) || existsSync(path) ? app.openTokens(path) : undefined;
  },
  fail,
});
registerImportCommand(program, app);
registerExportCommand(program, app);
registerStatsCommand(program, app);
registerTuneCommand(program, app);
registerConsolidateCommand(program, app);
registerConnectCommand(program, app);
registerHooksCommands(program, app);
registerDoctorCommand(program, app);
registerSearchCommand(program, app);
registerBriefCommand(program, app);
registerProjectsCommand(program, app);
registerReembedCommand(program, app);
registerRedactCommand(program, app);
registerModelCommands(program, app);
refuseUnknownCommands(program);

program.parseAsync(process.argv).catch(fail);
