/**
 * An FTS5 index's segments, decoded from its structure record (row 10 of the `%_data` shadow
 * table; format in SQLite's fts5_index.c, fts5StructureDecode). FTS5 has no SQL function that
 * reports them, and the compaction needs them to know how much merging is left.
 */

/** The `%_data` rowid of the structure record (FTS5_STRUCTURE_ROWID in fts5_index.c). */
export const STRUCTURE_ROWID = 10;

/** contentless_delete=1 tables write this marker after the cookie (FTS5_STRUCTURE_V2). */
const V2_MARKER = [0xff, 0x00, 0x00, 0x01] as const;

export interface Fts5Segment {
  /** Leaf pages (of the table's `pgsz`, 4050 bytes by default). */
  readonly pages: number;
  /** Pages of deleted-row tombstones (contentless_delete tables); a merge drops them. */
  readonly tombstonePages: number;
}

export interface Fts5Level {
  /** Segments of this level that are inputs of a merge in progress (0: none). */
  readonly merging: number;
  readonly segments: readonly Fts5Segment[];
}

export interface Fts5Structure {
  readonly levels: readonly Fts5Level[];
}

/** Decodes a structure record; throws on a record that does not parse (a corrupt index). */
export function decodeFts5Structure(block: Uint8Array): Fts5Structure {
  let at = 4; // the configuration cookie
  const v2 = V2_MARKER.every((byte, i) => block[4 + i] === byte);
  if (v2) at += 4;
  const next = (): number => {
    // SQLite's varint: big-endian groups of 7 bits, a set high bit means more follow; the 9th
    // byte carries 8 bits. Numbers, not bit operators: values may pass 2^31.
    let value = 0;
    for (let i = 0; i < 9; i++) {
      const byte = block[at++];
      if (byte === undefined) throw new Error('FTS5 structure record ends early');
      if (i === 8) return value * 256 + byte;
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) return value;
    }
    return value;
  };
  const levelCount = next();
  next(); // total segments
  next(); // write counter
  const levels: Fts5Level[] = [];
  for (let l = 0; l < levelCount; l++) {
    const merging = next();
    const count = next();
    const segments: Fts5Segment[] = [];
    for (let s = 0; s < count; s++) {
      next(); // segment id
      const first = next();
      const last = next();
      let tombstonePages = 0;
      if (v2) {
        next(); // origin1
        next(); // origin2
        tombstonePages = next();
        next(); // tombstone entries
        next(); // entries
      }
      segments.push({ pages: last - first + 1, tombstonePages });
    }
    levels.push({ merging, segments });
  }
  return { levels };
}

export function segmentCount(structure: Fts5Structure): number {
  return structure.levels.reduce((n, level) => n + level.segments.length, 0);
}

/**
 * Leaf pages a full merge still has to read: 0 once the index is one segment without tombstones.
 * The output segment of a merge in progress (the newest one on the level above its inputs) is
 * not counted, so the figure falls as a merge goes on.
 */
export function pagesToMerge(structure: Fts5Structure): number {
  const { levels } = structure;
  const all = levels.flatMap((level) => level.segments);
  if (all.length === 0 || (all.length === 1 && all[0]?.tombstonePages === 0)) return 0;
  let pages = 0;
  levels.forEach((level, l) => {
    const output = mergeOutput(levels, l);
    level.segments.forEach((segment, s) => {
      if (s !== output) pages += segment.pages;
    });
  });
  return pages;
}

/**
 * Whether a merge in progress reads or writes the index's largest segment: the merge that folds
 * everything into one. Merges among the small segments other writers add meanwhile do not count;
 * FTS5's automerge folds those in as it always does.
 */
export function mergingLargest(structure: Fts5Structure): boolean {
  const { levels } = structure;
  let largest: { level: number; index: number; pages: number } | undefined;
  levels.forEach((level, l) =>
    level.segments.forEach((segment, s) => {
      if (largest === undefined || segment.pages > largest.pages) largest = { level: l, index: s, pages: segment.pages };
    }),
  );
  if (largest === undefined) return false;
  const { level, index } = largest;
  const inputs = levels[level]?.merging ?? 0;
  return index < inputs || index === mergeOutput(levels, level);
}

/** Index, on level l, of the segment a merge of the level below writes; -1 when none is under way. */
function mergeOutput(levels: readonly Fts5Level[], l: number): number {
  return (levels[l - 1]?.merging ?? 0) > 0 ? (levels[l]?.segments.length ?? 0) - 1 : -1;
}
