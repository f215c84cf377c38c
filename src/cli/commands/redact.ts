/**
 * `limbic redact [--apply]`: what secret redaction would change in a memory written before it (or
 * with it off), by entity, type and count, never a value; `--apply` rewrites it everywhere the
 * memory keeps text and purges what the backend still holds of the old (docs/redaction.md).
 */
import type { Command } from 'commander';
import type { App } from '../app.js';
import { print } from '../output.js';
import { sweepRedactions } from '../../service/redaction-sweep.js';

export function registerRedactCommand(program: Command, app: App): void {
  program
    .command('redact')
    .description(
      'report the secrets stored in this memory (types and counts, never values); --apply rewrites them as [REDACTED:type] everywhere',
    )
    .option('--apply', 'rewrite them in place, then purge index segments, free pages, the write-ahead log and side files')
    .action(async (o: { apply?: boolean }) => {
      const config = app.config();
      const service = app.service(config);
      try {
        if (o.apply === true)
          process.stderr.write(
            'limbic: rewriting the memory; stop every other Limbic process using it first, or their caches may write old text back.\n',
          );
        // The rules run whatever --no-redact says: this command is the explicit request.
        const report = await sweepRedactions(service.store, app.redactor({ ...config, redact: true }), {
          apply: o.apply === true,
          now: Date.now(),
        });
        print(report);
        if (!report.applied && report.changes.entities + report.changes.relations > 0)
          process.stderr.write('limbic: nothing was changed; run "limbic redact --apply" to rewrite these.\n');
        if (report.applied && (report.rewrite?.entities ?? 0) > 0)
          process.stderr.write(
            'limbic: the entities rewritten wait for embedding; the server embeds them in the background, or run "limbic reembed".\n',
          );
      } finally {
        await service.close();
      }
    });
}
