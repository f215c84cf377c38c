/**
 * What `limbic export` writes (docs/export.md): every field of the memory, in a file the official
 * server still reads. Entity and relation lines in the official shape with Limbic's fields as extra
 * keys (observation kinds and times, superseded history, status, project, times, relation context,
 * creation and end, use counts), then the applied ranking parameters and the co-occurrence counts
 * as lines of their own types, which the official loader ignores. Read through the transfer
 * capability, the same records `limbic migrate` copies. `--official` writes the official shape
 * alone, byte for byte as the official server would.
 */
import {
  coOccurrenceLine,
  formatMemoryFile,
  limbicEntityLine,
  limbicRelationLine,
  rankingLine,
  type ExportEntity,
  type ExportRelation,
} from '../core/jsonl.js';
import { statusFromStored } from '../core/types.js';
import type { MemoryService } from '../service/memory-service.js';
import type { EntityRecord, RelationRecord } from '../store/store.js';

const PAGE = 500;

export const exportEntity = (r: EntityRecord): ExportEntity => ({
  name: r.name,
  entityType: r.entityType,
  status: statusFromStored(r.status),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  project: r.project,
  observations: r.observations,
  superseded: r.superseded,
  access: r.access === undefined || r.access.count === 0 ? undefined : r.access,
});

export const exportRelation = (r: RelationRecord): ExportRelation => ({
  from: r.from,
  to: r.to,
  relationType: r.relationType,
  context: r.context,
  createdAt: r.createdAt,
  endedAt: r.endedAt,
});

/** The memory as a memory.jsonl: every field, or (`official`) the official shape alone. Lines "\n"-joined, no trailing newline, as the official writer. */
export async function exportMemory(service: MemoryService, options: { readonly official: boolean }): Promise<string> {
  const { transfer, tuning } = service.store;
  if (options.official || transfer === undefined) return formatMemoryFile(await service.readGraph({ includeEnded: true }));
  const lines: string[] = [];
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readEntities(cursor, PAGE);
    for (const r of page.records) lines.push(limbicEntityLine(exportEntity(r)));
    cursor = page.next;
  }
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readRelations(cursor, PAGE);
    for (const r of page.records) lines.push(limbicRelationLine(exportRelation(r)));
    cursor = page.next;
  }
  const parameters = await tuning?.parameters();
  if (parameters !== undefined && parameters.source === 'tuned')
    lines.push(rankingLine({ gamma: parameters.gamma, betaSal: parameters.betaSal, rrfK: parameters.rrfK, tunedAt: parameters.tunedAt }));
  for (let cursor: number | undefined = 0; cursor !== undefined;) {
    const page = await transfer.readCoOccurrences(cursor, PAGE);
    for (const c of page.records) lines.push(coOccurrenceLine(c));
    cursor = page.next;
  }
  return lines.join('\n');
}
