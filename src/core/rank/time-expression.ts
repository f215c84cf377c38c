/**
 * Calendar dates in text, for the context stage's time match (issue 18, part 3): the absolute
 * time expressions of a query ("in June", "May 2023", "on 8 May, 2023", "en julio de 2023",
 * "2023-05-08") and the dates an entity's metadata observations hold ("date: 1:56 pm on 8 May,
 * 2023"). English and Spanish, the languages Limbic routes. Relative expressions ("last week") are
 * not read: they need the date the question was asked, which a search does not know.
 */

/** A calendar date as precise as the text gave it: a year alone, a month (of any year, or of one), a day. */
export interface CalendarDate {
  readonly year?: number;
  /** 0 = January. */
  readonly month?: number;
  readonly day?: number;
}

const MONTHS: Readonly<Record<string, number>> = {
  january: 0,
  jan: 0,
  february: 1,
  feb: 1,
  march: 2,
  mar: 2,
  april: 3,
  apr: 3,
  may: 4,
  june: 5,
  jun: 5,
  july: 6,
  jul: 6,
  august: 7,
  aug: 7,
  september: 8,
  sept: 8,
  sep: 8,
  october: 9,
  oct: 9,
  november: 10,
  nov: 10,
  december: 11,
  dec: 11,
  enero: 0,
  febrero: 1,
  marzo: 2,
  abril: 3,
  mayo: 4,
  junio: 5,
  julio: 6,
  agosto: 7,
  septiembre: 8,
  setiembre: 8,
  octubre: 9,
  noviembre: 10,
  diciembre: 11,
};

const MONTH = `(${Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|')})\\.?`;
/** Full names only where a month stands alone ("en mar" is "at sea", "in dec" is rare). */
const FULL_MONTH = `(${Object.keys(MONTHS)
  .filter((m) => m.length > 4 || ['may', 'june', 'july', 'mayo', 'junio', 'julio', 'marzo', 'abril', 'enero'].includes(m))
  .join('|')})`;
const YEAR = '((?:19|20)\\d\\d)';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
/**
 * "de" and commas join the parts in Spanish and in English dates ("8 de mayo de 2023", "May 23, 2023"):
 * spaces, or a comma with spaces around it, then "de" / "of" and spaces if written; "de" / "of" may
 * also follow the part directly ("8de mayo"). Written so that no two quantified parts can take the
 * same characters (issue 35): the earlier `\s*,?\s*(?:de|of)?\s+` could split a run of spaces
 * between its three `\s` parts in every way, a cube of the run's length (16 s for 2,000 spaces
 * after a number). Here a comma separates the two runs, and the lookbehind (the join ends in a space
 * or a comma) replaces the third run; a run of spaces is tried once per end, a line of the run.
 * Exported for the test that it joins exactly what the earlier pattern joined.
 */
export const DATE_JOIN = '(?:\\s*(?:,\\s*)?(?<=[\\s,])(?:(?:de|of)\\s+)?|(?:de|of)\\s+)';

/**
 * Most specific first: a day-month-year is not also read as a month-year and a year. Exported for
 * the test that every pattern of `src/` takes time linear in its input (test/invariants/regex-linear.test.ts).
 */
export const DATE_PATTERNS: readonly { readonly re: RegExp; readonly read: (m: RegExpExecArray) => CalendarDate }[] = [
  { re: /\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b/giu, read: (m) => ({ year: +m[1]!, month: +m[2]! - 1, day: +m[3]! }) },
  { re: new RegExp(`\\b${DAY}${DATE_JOIN}${MONTH}${DATE_JOIN}${YEAR}\\b`, 'giu'), read: (m) => date(m[3], m[2], m[1]) },
  { re: new RegExp(`\\b${MONTH}\\s+${DAY}${DATE_JOIN}${YEAR}\\b`, 'giu'), read: (m) => date(m[3], m[1], m[2]) },
  { re: /\b((?:19|20)\d\d)-(\d\d)\b/giu, read: (m) => ({ year: +m[1]!, month: +m[2]! - 1 }) },
  { re: new RegExp(`\\b${MONTH}${DATE_JOIN}${YEAR}\\b`, 'giu'), read: (m) => date(m[2], m[1], undefined) },
  { re: new RegExp(`\\b${DAY}${DATE_JOIN}${MONTH}\\b`, 'giu'), read: (m) => date(undefined, m[2], m[1]) },
  { re: new RegExp(`\\b${MONTH}\\s+${DAY}\\b`, 'giu'), read: (m) => date(undefined, m[1], m[2]) },
  // A bare month or year only after a word that makes it a time ("in May", not "may I"; "in 2023", not "2023 people").
  {
    re: new RegExp(`\\b(?:in|during|since|until|by|before|after|en|durante|desde|hasta|antes de|después de)\\s+${FULL_MONTH}\\b`, 'giu'),
    read: (m) => date(undefined, m[1], undefined),
  },
  {
    re: new RegExp(`\\b(?:in|during|since|until|by|before|after|of|en|durante|desde|hasta|de)\\s+${YEAR}\\b`, 'giu'),
    read: (m) => ({ year: +m[1]! }),
  },
];

function date(year: string | undefined, month: string | undefined, day: string | undefined): CalendarDate {
  const m = month === undefined ? undefined : MONTHS[month.toLowerCase()];
  const d = day === undefined ? undefined : Number(day);
  return {
    ...(year === undefined ? {} : { year: Number(year) }),
    ...(m === undefined ? {} : { month: m }),
    ...(d === undefined || d < 1 || d > 31 ? {} : { day: d }),
  };
}

/**
 * Every absolute date in `text`, most specific reading first; a stretch of text is read once.
 * @example timeExpressions('What did Mel paint in July 2023?') // [{ year: 2023, month: 6 }]
 * @example timeExpressions('date: 1:56 pm on 8 May, 2023') // [{ year: 2023, month: 4, day: 8 }]
 */
export function timeExpressions(text: string): CalendarDate[] {
  // Stretches already read, sorted and disjoint: a text of thousands of dates is checked by halving, not one by one.
  let taken: readonly (readonly [number, number])[] = [];
  const found: CalendarDate[] = [];
  for (const { re, read } of DATE_PATTERNS) {
    const added: [number, number][] = [];
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      if (overlaps(taken, start, end)) continue;
      const d = read(m);
      if (d.year === undefined && d.month === undefined) continue;
      added.push([start, end]);
      found.push(d);
    }
    if (added.length > 0) taken = mergeSorted(taken, added);
  }
  return found;
}

/** Whether [start, end) overlaps a stretch of `taken` (sorted, disjoint). */
function overlaps(taken: readonly (readonly [number, number])[], start: number, end: number): boolean {
  let lo = 0;
  let hi = taken.length;
  // The first stretch that ends after `start`: the only one that can overlap without starting after `end`.
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (taken[mid]![1] <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo < taken.length && taken[lo]![0] < end;
}

/** Two sorted lists of disjoint stretches as one sorted list (one pattern's matches never overlap each other). */
function mergeSorted(a: readonly (readonly [number, number])[], b: readonly (readonly [number, number])[]): (readonly [number, number])[] {
  const out: (readonly [number, number])[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]![0] <= b[j]![0])) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

const monthIndex = (d: { year: number; month: number }): number => d.year * 12 + d.month;

/**
 * How well a stored date answers a query's time expression: 1 when it falls inside it (every part
 * the query names agrees), `late` when it falls in the unit just after (the next month for a month,
 * the next 7 days for a day): what a memory holds is written when it is told, often after the
 * event ("we went camping in June", said in July). 0 otherwise; a stored date without a year and a
 * month never matches.
 * @example dateMatch({ month: 5 }, { year: 2023, month: 6, day: 2 }, 0.5) // 0.5: June asked, early July stored
 */
export function dateMatch(query: CalendarDate, stored: CalendarDate, late: number): number {
  if (stored.year === undefined || stored.month === undefined) return 0;
  if (query.month === undefined) return query.year !== undefined && query.year === stored.year ? 1 : 0;
  const sameYear = query.year === undefined || query.year === stored.year;
  if (query.day === undefined) {
    if (sameYear && query.month === stored.month) return 1;
    const next =
      query.year === undefined
        ? (query.month + 1) % 12 === stored.month
        : monthIndex({ year: query.year, month: query.month }) + 1 === monthIndex({ year: stored.year, month: stored.month });
    return next ? late : 0;
  }
  if (stored.day === undefined) return 0;
  const year = query.year ?? stored.year;
  const asked = Date.UTC(year, query.month, query.day);
  const held = Date.UTC(stored.year, stored.month, stored.day);
  const days = (held - asked) / 86_400_000;
  if (days === 0) return 1;
  return days > 0 && days <= 7 ? late : 0;
}
