/** `limbic connect CLIENT`: adds Limbic to an MCP client's own config file (../connect.ts does the work). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_NAMESPACE } from '../../http/namespaces.js';
import type { App } from '../app.js';
import { print } from '../output.js';

export function registerConnectCommand(program: Command, app: App): void {
  program
    .command('connect')
    .description(
      'add Limbic to an MCP client: claude-desktop, claude-code, cursor, vscode or windsurf (keeps the rest of its config, backs it up first)',
    )
    .argument('<client>', 'claude-desktop, claude-code, cursor, vscode or windsurf')
    .option('--name <name>', 'server name in the client', 'memory')
    .option('--config <file>', "the client's config file, when it is not where the client usually keeps it")
    .option('--print', 'show the entry instead of writing it')
    .option('--replace', 'replace an entry of that name that starts another server')
    .action(async (clientName: string, o: { name: string; config?: string; print?: boolean; replace?: boolean }) => {
      const { connectClient, findClient, onPath, quote, thisLimbic } = await import('../connect.js');
      const where = app.where();
      const launcher = thisLimbic(new URL('../main.js', import.meta.url).href, process.execPath, where.env);
      const { namespace, tools } = app.rootConfig();
      const result = connectClient({
        client: findClient(clientName),
        launcher,
        name: o.name,
        // A chosen database goes into the entry (a client does not see the shell's LIMBIC_DB); the default needs none.
        db: app.chosenDb(),
        // A chosen namespace goes into the entry too (the client does not see the shell's LIMBIC_NAMESPACE).
        namespace: namespace === DEFAULT_NAMESPACE ? undefined : namespace,
        // And a tool profile other than the default (the client does not see the shell's LIMBIC_TOOLS).
        tools: tools === 'all' ? undefined : tools,
        configFile: o.config === undefined ? undefined : resolve(o.config),
        print: o.print === true,
        replace: o.replace === true,
        where,
        limbicCommand: onPath('limbic', where) ? 'limbic' : [launcher.command, ...launcher.args].map(quote).join(' '),
      });
      if (result.action === 'printed') print({ [result.serversKey]: { [result.name]: result.entry } });
      for (const line of result.messages) process.stderr.write(`limbic: ${line}\n`);
    });
}
