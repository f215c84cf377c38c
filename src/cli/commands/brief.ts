/**
 * `limbic brief [DIR]`: the brief a session started in DIR (default: here) would get (docs/capture.md,
 * "The brief"), printed as the SessionStart hook injects it. Nothing when there is nothing to say,
 * outside any project, or with the brief off (LIMBIC_BRIEF=0). Fast: no model, nothing loaded
 * beyond the database (App.lightService).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { App } from '../app.js';

export function registerBriefCommand(program: Command, app: App): void {
  program
    .command('brief')
    .description(
      "print the brief a session started in DIR gets: the project's open decisions, latest sessions and memories (fenced reference data)",
    )
    .argument('[dir]', 'the folder a session would start in', '.')
    .option('--project <key>', 'the project, instead of the one found from the folder (env LIMBIC_PROJECT)')
    .option('--max-chars <n>', 'fewer characters than this (default 9500; the token bound, 2000, holds too)')
    .action(async (dir: string, o: { project?: string; maxChars?: string }) => {
      const config = app.config();
      if (!config.brief) {
        process.stderr.write('limbic: the brief is off (LIMBIC_BRIEF=0); nothing to print\n');
        return;
      }
      const project = await app.project(resolve(dir), o.project);
      if (project === undefined) {
        process.stderr.write(`limbic: ${resolve(dir)} is outside any project (the home folder or /): there is no brief\n`);
        return;
      }
      const service = app.lightService(config);
      try {
        const maxChars = o.maxChars === undefined ? undefined : Number(o.maxChars);
        if (maxChars !== undefined && !(maxChars > 0)) throw new Error('--max-chars takes a positive number of characters');
        const brief = await service.brief(project, { maxChars });
        if (brief === '') process.stderr.write(`limbic: nothing in the memory about ${project.key} yet\n`);
        else process.stdout.write(`${brief}\n`);
      } finally {
        await service.close();
      }
    });
}
