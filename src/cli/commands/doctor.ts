/** `limbic doctor`: every part Limbic needs, one line each, and the command that fixes each problem (../doctor.ts). */
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { App } from '../app.js';
import { fail } from '../output.js';

export function registerDoctorCommand(program: Command, app: App): void {
  program
    .command('doctor')
    .description(
      'check Node, SQLite (FTS5, sqlite-vec, usearch), the model files and the ONNX runtime, the database and free disk; exit code 1 when something is broken',
    )
    .option('--json', 'print the report as JSON')
    .action(async (o: { json?: boolean }) => {
      const config = app.config();
      if (app.isPostgres(config.dbPath))
        fail(new Error('limbic doctor checks a SQLite file. For PostgreSQL, "limbic --db URL stats" shows the counts and index state.'));
      const { formatReport, runDoctor } = await import('../doctor.js');
      const { onPath } = await import('../connect.js');
      const main = fileURLToPath(new URL('../main.js', import.meta.url));
      const limbic = onPath('limbic', app.where()) ? 'limbic' : `node ${main}`;
      const cli = app.chosenDb() === undefined ? limbic : `${limbic} --db "${config.dbPath}"`;
      const report = await runDoctor(await app.doctorProbes(config, cli));
      process.stdout.write(o.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      if (!report.ok) process.exitCode = 1;
    });
}
