/**
 * `limbic import FILE`: streams a memory.jsonl into the store in batched transactions. A malformed
 * line is skipped and reported with its number, never fatal; running it twice adds nothing.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { ERROR_CODES, isMemoryError } from '../core/errors.js';
import { parseMemoryLine } from '../core/jsonl.js';
import type { NewEntity, Relation } from '../core/types.js';
import type { MemoryService } from '../service/memory-service.js';
import { progressBar, type Progress } from './progress.js';

export interface ImportReport {
  readonly lines: number;
  readonly entitiesRead: number;
  readonly relationsRead: number;
  readonly entitiesAdded: number;
  readonly observationsAdded: number;
  readonly relationsAdded: number;
  readonly skipped: readonly { readonly line: number; readonly reason: string }[];
  readonly ignored: number;
  /** Relations whose endpoints are not entities after the import (kept, as the official server does). */
  readonly danglingRelations: number;
  /** False when another process kept the keyword indexes from being compacted (the data is saved). */
  readonly compacted: boolean;
}

const BATCH_LINES = 2_000;

export async function importFile(service: MemoryService, path: string): Promise<ImportReport> {
  const size = statSync(path).size;
  const bar = progressBar('import', size, 'bytes');
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let bytes = 0;
  let entities: NewEntity[] = [];
  let relations: Relation[] = [];
  const totals = { entitiesRead: 0, relationsRead: 0, entitiesAdded: 0, observationsAdded: 0, relationsAdded: 0, ignored: 0 };
  const skipped: { line: number; reason: string }[] = [];
  const endpoints = new Set<string>();
  const relationEnds: [string, string][] = [];

  const flush = async (): Promise<void> => {
    if (entities.length === 0 && relations.length === 0) return;
    const counts = await service.importBatch({ entities, relations });
    totals.entitiesAdded += counts.entitiesAdded;
    totals.observationsAdded += counts.observationsAdded;
    totals.relationsAdded += counts.relationsAdded;
    entities = [];
    relations = [];
    bar.update(Math.min(bytes, size));
  };

  for await (const line of lines) {
    lineNo++;
    bytes += Buffer.byteLength(line) + 1;
    const parsed = parseMemoryLine(line);
    switch (parsed.kind) {
      case 'entity':
        entities.push(parsed.entity);
        totals.entitiesRead++;
        break;
      case 'relation':
        relations.push(parsed.relation);
        endpoints.add(parsed.relation.from).add(parsed.relation.to);
        relationEnds.push([parsed.relation.from, parsed.relation.to]);
        totals.relationsRead++;
        break;
      case 'error':
        skipped.push({ line: lineNo, reason: parsed.reason });
        break;
      case 'ignored':
        totals.ignored++;
        break;
      case 'blank':
        break;
      default: {
        const _exhaustive: never = parsed;
        return _exhaustive;
      }
    }
    if (entities.length + relations.length >= BATCH_LINES) await flush();
  }
  await flush();
  bar.stop();
  const compacted = await compactIndexes(service);
  const known = await service.existingNames([...endpoints]);
  const danglingRelations = relationEnds.filter(([from, to]) => !known.has(from) || !known.has(to)).length;
  return { lines: lineNo, ...totals, skipped, danglingRelations, compacted };
}

/**
 * Compacts the keyword indexes, with a progress bar. Run even when nothing was added: it costs
 * nothing on compact indexes and finishes a compaction that a killed import left half done.
 * Another process holding the lock past the wait limit only leaves them uncompacted.
 */
export async function compactIndexes(service: MemoryService): Promise<boolean> {
  let bar: Progress | undefined;
  try {
    await service.optimizeIndexes(({ done, total }) => {
      bar ??= progressBar('compact', total, 'pages');
      bar.update(done, total);
    });
    return true;
  } catch (error) {
    if (!isMemoryError(error) || error.code !== ERROR_CODES.STORE_BUSY) throw error;
    process.stderr.write(
      'limbic: the imported data is saved, but another Limbic process held the database past the wait limit, so the keyword indexes were not compacted. Searches work as they are; run the import again later to compact them.\n',
    );
    return false;
  } finally {
    bar?.stop();
  }
}
