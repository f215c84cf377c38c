/**
 * The brief's text (docs/capture.md, "The brief"): sections of short items, fenced as reference data
 * and cut to a budget of tokens and characters. Pure: src/service/brief.ts decides what goes in.
 */

/** The fence (src/capture/conversation.ts BRIEF_OPEN / BRIEF_CLOSE, repeated here: core imports nothing outside it). */
export const FENCE_OPEN = '<limbic-memory-brief';
export const FENCE_CLOSE = '</limbic-memory-brief>';

/** At most this many tokens, and fewer characters than this: clients inject ~10 KB in full, a preview past it. */
export const BRIEF_MAX_TOKENS = 2_000;
export const BRIEF_MAX_CHARS = 9_500;
/** Characters of one item's quoted text. */
export const BRIEF_ITEM_CHARS = 280;

/**
 * Tokens a text costs a model, estimated from above: about 3.5 characters a token for ASCII (English
 * and code run 3.5 to 4.5), one a token for anything else (accents, CJK, emoji: tokenizers spend one
 * or more on each). An overestimate keeps the brief inside its budget for every tokenizer.
 * @example estimateTokens('hello world') // 4
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if ((ch.codePointAt(0) ?? 0) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 3.5 + other);
}

/** One line, at most `max` characters, with an ellipsis where it was cut. */
export function clip(text: string, max = BRIEF_ITEM_CHARS): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, max - 1).join('')}…`;
}

/** Text that must not open or close the fence (a captured turn that quotes it), defused. */
export function defuse(text: string): string {
  // A zero-width space inside the marker: it reads the same, and no reader takes it for the fence.
  return text.replaceAll(FENCE_CLOSE, '</limbic-memory-brief\u200b>').replaceAll(FENCE_OPEN, '<limbic-memory\u200b-brief');
}

export interface BriefSection {
  readonly title: string;
  /** Best first; each one line. */
  readonly items: readonly string[];
}

export interface BriefBudget {
  readonly maxTokens: number;
  readonly maxChars: number;
}

/**
 * The fenced brief: a header saying what it is, then each section's items in order while they fit the
 * budget (the fence and header included); a section with no item that fits is left out. Empty when
 * no item fits at all.
 */
export function composeBrief(
  attributes: Readonly<Record<string, string>>,
  header: string,
  sections: readonly BriefSection[],
  budget: BriefBudget,
): string {
  const attrs = Object.entries(attributes)
    .map(([k, v]) => ` ${k}="${defuse(v).replace(/["<>&]/g, '')}"`)
    .join('');
  const open = `${FENCE_OPEN}${attrs}>`;
  const lines = [open, defuse(header)];
  let used = [...lines, FENCE_CLOSE].join('\n');
  let items = 0;
  for (const section of sections) {
    const title = `\n## ${section.title}`;
    let titled = false;
    for (const item of section.items) {
      const line = `- ${defuse(item)}`;
      const adding = (titled ? '' : `\n${title}`) + `\n${line}`;
      const next = used + adding;
      if (next.length >= budget.maxChars || estimateTokens(next) > budget.maxTokens) continue;
      if (!titled) lines.push(title);
      titled = true;
      lines.push(line);
      used = next;
      items++;
    }
  }
  return items === 0 ? '' : [...lines, FENCE_CLOSE].join('\n');
}
