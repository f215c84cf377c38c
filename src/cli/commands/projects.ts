/**
 * `limbic projects`: the projects captured memories belong to, with what each holds; and
 * `limbic projects move FROM TO`, which gives FROM's memories to TO (a renamed remote, a repository
 * moved to another host, two projects merged: docs/capture.md, "Moving and merging projects").
 */
import type { Command } from 'commander';
import type { App } from '../app.js';
import { print } from '../output.js';
import { wantsJson } from '../readable.js';

export function registerProjectsCommand(program: Command, app: App): void {
  const projects = program
    .command('projects')
    .description('list the projects captured memories belong to (JSON with --json, or when not printing to a terminal)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const service = app.lightService(app.config());
      try {
        const list = await service.projects();
        if (wantsJson(o.json, process.stdout.isTTY)) return print(list);
        if (list.length === 0)
          return void process.stdout.write(
            'No project yet: memories are captured into one by the hooks (limbic hooks install) or by limbic import.\n',
          );
        const width = Math.max(...list.map((p) => p.project.length));
        for (const p of list)
          process.stdout.write(
            `${p.project.padEnd(width)}  ${String(p.entities).padStart(6)} entities  ${String(p.observations).padStart(8)} observations  last ${new Date(p.lastUpdated).toISOString().slice(0, 10)}\n`,
          );
      } finally {
        await service.close();
      }
    });
  projects
    .command('move')
    .description("give every memory of project FROM to project TO (TO may exist: the two are merged); FROM's sessions become part_of TO")
    .argument('<from>', 'the project key to empty, as limbic projects lists it')
    .argument('<to>', 'the project key that takes its memories')
    .action(async (from: string, to: string) => {
      const service = app.lightService(app.config());
      try {
        const moved = await service.moveProject(from, to);
        process.stdout.write(
          moved === 0 ? `No memory belongs to ${from}; nothing was moved.\n` : `Moved ${moved} entities from ${from} to ${to}.\n`,
        );
      } finally {
        await service.close();
      }
    });
}
