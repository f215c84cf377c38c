/**
 * Secret redaction, the pure part (docs/redaction.md): what a redactor promises, how found spans
 * become `[REDACTED:type]`, the tally a tool's answer reports, and the few patterns Limbic adds to
 * the maintained rule set it runs (secretlint's recommended preset, src/service/redaction.ts).
 * Every added pattern names what the library lacks; test/core/text/redaction.test.ts plants one
 * value per type and the near-misses that must stay.
 */

/** How many values of one type were redacted. `type` is a short stable slug (`aws-access-key`). */
export interface RedactionCount {
  readonly type: string;
  readonly count: number;
}

/** A found secret: the code units [start, end) of the text, and its type. */
export interface SecretSpan {
  readonly start: number;
  readonly end: number;
  readonly type: string;
  /** Which of two overlapping spans names the whole: a provider's own rule beats a generic one. @default 1 */
  readonly priority?: number;
}

export interface RedactedTexts {
  /** The texts, in the order given, each with its secrets replaced. */
  readonly texts: readonly string[];
  readonly counts: readonly RedactionCount[];
}

/**
 * What every write goes through (the MemoryService's `redactor`). Deterministic: the same text gives
 * the same result, so a name redacted in create_entities is the name create_relations meets.
 */
export interface Redactor {
  /** Whether it redacts anything (false for the null object `NO_REDACTION`). */
  readonly enabled: boolean;
  /** Redacts many texts in one pass (the rules run once over all of them). */
  redactAll(texts: readonly string[]): Promise<RedactedTexts>;
  /** Loads the rules ahead of the first write, where loading them takes time. */
  warm?(): Promise<void>;
}

/** The redactor when redaction is switched off (`--no-redact`): every text as it came. */
export const NO_REDACTION: Redactor = Object.freeze({
  enabled: false,
  redactAll: (texts: readonly string[]): Promise<RedactedTexts> => Promise.resolve({ texts, counts: [] }),
});

/** What a redacted value becomes. */
export const redactedMark = (type: string): string => `[REDACTED:${type}]`;

/**
 * Whether a text can hold anything a rule finds: every rule's match has an `=`, `:` or `@`, a PEM
 * header, three digits in a row, or a run of 16+ characters of a token's alphabet. Plain prose (most
 * search queries, most observations) has none, and is not scanned at all.
 * @example mayHoldSecret('what does the user prefer') // false
 */
export function mayHoldSecret(text: string): boolean {
  return /[=:@]|-----BEGIN|\d{3}|[A-Za-z0-9_+/.~-]{16,}/.test(text);
}

/** A mark already in the text: what a second pass over redacted text must leave as it is. */
const MARK = /\[REDACTED:[a-z0-9-]+\]/g;

/**
 * Replaces the spans with their marks. Overlapping spans become one (the union, typed by the
 * span of highest priority, then the earliest and longest); a span inside a mark already there is
 * no secret, so redacting twice changes nothing and counts nothing.
 * @example replaceSpans('key AKIA…', [{ start: 4, end: 24, type: 'aws-access-key' }]).text // 'key [REDACTED:aws-access-key]'
 */
export function replaceSpans(text: string, spans: readonly SecretSpan[]): { text: string; counts: RedactionCount[] } {
  if (spans.length === 0) return { text, counts: [] };
  const marks = [...text.matchAll(MARK)].map((m) => [m.index ?? 0, (m.index ?? 0) + m[0].length] as const);
  const inMark = (s: SecretSpan): boolean => marks.some(([a, b]) => s.start >= a && s.end <= b);
  // Highest priority first: a provider's rule knows its secret's extent, so a generic span that
  // overlaps it gives way; spans of equal priority that overlap become their union.
  const ranked = spans
    .filter((s) => s.end > s.start && !inMark(s))
    .sort((a, b) => (b.priority ?? 1) - (a.priority ?? 1) || a.start - b.start);
  const kept: { start: number; end: number; type: string; priority: number }[] = [];
  for (const s of ranked) {
    const priority = s.priority ?? 1;
    const overlapping = kept.filter((k) => s.start < k.end && k.start < s.end);
    if (overlapping.some((k) => k.priority > priority)) continue;
    const first = overlapping[0];
    if (first === undefined) {
      kept.push({ start: s.start, end: s.end, type: s.type, priority });
      continue;
    }
    for (const k of overlapping.slice(1)) kept.splice(kept.indexOf(k), 1);
    first.start = Math.min(s.start, ...overlapping.map((k) => k.start));
    first.end = Math.max(s.end, ...overlapping.map((k) => k.end));
  }
  const merged = kept.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  const tally = new RedactionTally();
  for (const s of merged) {
    out += text.slice(at, s.start) + redactedMark(s.type);
    at = s.end;
    tally.add([{ type: s.type, count: 1 }]);
  }
  return { text: out + text.slice(at), counts: tally.counts() };
}

/** Counts summed by type, across the texts of one call (and the calls of one tool answer). */
export class RedactionTally {
  private readonly byType = new Map<string, number>();

  add(counts: readonly RedactionCount[]): void {
    for (const c of counts) this.byType.set(c.type, (this.byType.get(c.type) ?? 0) + c.count);
  }

  /** By type, most first, then by name. */
  counts(): RedactionCount[] {
    return [...this.byType].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
  }

  get total(): number {
    let n = 0;
    for (const c of this.byType.values()) n += c;
    return n;
  }
}

/**
 * The line a tool's answer adds when something was redacted: types and counts, never a value.
 * @example redactionNotice([{ type: 'github-token', count: 2 }]) // 'Redacted before storing: 2 github-token (each stored as [REDACTED:type]).'
 */
export function redactionNotice(counts: readonly RedactionCount[]): string {
  return `Redacted before storing: ${counts.map((c) => `${c.count} ${c.type}`).join(', ')} (each stored as [REDACTED:type]).`;
}

/**
 * One of Limbic's own patterns. `group` is the capture group holding the secret (0: the whole
 * match); `accept` rejects a match the pattern alone cannot (a placeholder, a word in prose).
 */
export interface SecretPattern {
  readonly type: string;
  /** Global; the redactor adds the `d` flag to find the group's place. */
  readonly pattern: RegExp;
  readonly group: number;
  /** Generic patterns (a `KEY=value` line) give way to a provider's own rule on the same text. */
  readonly priority: number;
  readonly accept?: (value: string, match: RegExpExecArray) => boolean;
  /** The type of one match, where it depends on the match (a `KEY=value` line: password or secret); one of `types`. @default type */
  readonly typeOf?: (match: RegExpExecArray) => string;
  /** Every type `typeOf` gives. @default [type] */
  readonly types?: readonly string[];
  /** Why the rule set needs it: shown in the docs' table. */
  readonly why: string;
}

/** Bits per character of a string's own distribution: random tokens score high, words low. */
export function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Values that stand for a secret without being one: `${TOKEN}`, `<password>`, `****`, `xxxx`, `changeme`. */
function isPlaceholder(value: string): boolean {
  const v = value.replace(/^["'`]|["'`,;]$/g, '');
  return (
    v.length === 0 ||
    v.startsWith('[REDACTED:') ||
    /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(v) || // a variable: ${TOKEN}, $TOKEN
    /^%[A-Za-z_][A-Za-z0-9_]*%$/.test(v) ||
    /^[<{]/.test(v) || // <your key here>, {{ secret }}
    /^([*xX.•#-])\1*$/.test(v) ||
    /^(?:null|none|nil|undefined|true|false|empty|changeme|password|secret|example|redacted|your[-_]?\w*|process\.env\.\w+|os\.environ.*)$/i.test(
      v,
    )
  );
}

/**
 * Words that make a name a secret's: `DB_PASSWORD`, `api_key`, `clientSecret`, `"token"`. The word
 * must end the name or be followed by a separator, so "passwordless" or "tokenizer" do not count.
 */
const SECRET_WORD = String.raw`(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?key|credentials?)`;

/**
 * A `KEY=value` or `Key: value` assignment whose name holds a secret word. The match starts at the
 * word (a pattern that started at every name would try each position of the text again and again);
 * the rest of the name before it is read back by `assignmentName`.
 */
const ASSIGNMENT = new RegExp(
  String.raw`${SECRET_WORD}((?:[_.-][A-Za-z0-9_.-]{0,40})?)["']?[ 	]*(?:=|:|=>|:=)[ 	]*["']?([^\s"'\`,;]{3,})`,
  'gi',
);

/** The whole name of an assignment ASSIGNMENT matched: the name characters before the word (up to 40), then the match's name part. */
function assignmentName(match: RegExpExecArray): string {
  let start = match.index;
  while (start > 0 && start > match.index - 40 && /[A-Za-z0-9_.-]/.test(match.input[start - 1] ?? '')) start--;
  return match.input.slice(start, match.index) + (/^[^"' \t=:]+/.exec(match[0])?.[0] ?? '');
}

/**
 * The value of a secret-named assignment is kept when it is a placeholder, or when written as
 * prose (`password: required`): a value of letters alone must be long and varied to count. An
 * upper-case environment name (`DB_PASSWORD=…`) takes any value.
 */
function acceptAssignment(value: string, match: RegExpExecArray): boolean {
  const name = assignmentName(match);
  if (isPlaceholder(value) || /^https?:\/\//i.test(value)) return false;
  if (/^[A-Z][A-Z0-9_]*$/.test(name.replace(/[.-]/g, '_')) && /[_]/.test(name)) return true; // DB_PASSWORD=hunter2
  if (/[^A-Za-z]/.test(value)) return value.length >= 6;
  return value.length >= 12 && shannonEntropy(value) >= 3;
}

/** Limbic's additions to secretlint's recommended preset, each for something the preset lacks. */
export const EXTRA_SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    type: 'jwt',
    // A header and a payload that are base64url JSON objects ('{"' encodes as "eyJ"), then a signature.
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g,
    group: 0,
    priority: 2,
    why: 'JSON Web Tokens (bearer credentials): secretlint has no rule for them',
  },
  {
    type: 'stripe-key',
    // Secret and restricted keys, live and test mode: sk_live_…, rk_test_… (webhook secrets: whsec_…).
    pattern: /\b(?:[sr]k_(?:live|test)_[0-9A-Za-z]{24,}|whsec_[0-9A-Za-z]{32,})(?![0-9A-Za-z])/g,
    group: 0,
    priority: 2,
    why: 'Stripe secret, restricted and webhook keys: secretlint 12 (the last line for Node 20) has no Stripe rule',
  },
  {
    type: 'tailscale-key',
    pattern: /\btskey-(?:api|auth|client|scim|webhook)-[0-9A-Za-z]{6,}-[0-9A-Za-z]{16,}(?![0-9A-Za-z])/g,
    group: 0,
    priority: 2,
    why: 'Tailscale API, auth and OAuth client keys: secretlint 12 has no Tailscale rule',
  },
  {
    type: 'google-api-key',
    pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
    group: 0,
    priority: 2,
    why: "Google API keys (Maps, Gemini, Firebase): secretlint's GCP rule reads only service-account files",
  },
  {
    type: 'azure-storage-key',
    // Storage account keys (88 base64 chars) and Service Bus / Event Hubs / IoT shared access keys.
    pattern: /\b(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)\s*=\s*([A-Za-z0-9+/]{40,88}={0,2})/g,
    group: 1,
    priority: 2,
    why: 'Azure connection-string keys: secretlint dropped its Azure rule for false positives (it flagged any UUID as a client id)',
  },
  {
    type: 'azure-client-secret',
    // Entra ID (Azure AD) client secrets: three characters, a digit, "Q~", then 31-34 characters.
    pattern: /(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/g,
    group: 1,
    priority: 2,
    why: 'Azure Entra ID client secrets (the format gitleaks matches): not in secretlint',
  },
  {
    type: 'azure-sas-token',
    pattern: /[?&]sig=([A-Za-z0-9%+/]{40,}={0,2})/g,
    group: 1,
    priority: 2,
    why: 'the signature of a shared access signature URL (Azure SAS): not in secretlint',
  },
  {
    type: 'private-key',
    // A key block cut short (a tool summary keeps the first lines) has no END line, and secretlint
    // needs the whole block; from the BEGIN line through the base64 that follows (and END if any).
    pattern:
      /-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:\\[rn]|\s)*[A-Za-z0-9+/=]{16,}(?:(?:\\[rn]|\s)+[A-Za-z0-9+/=]{4,})*(?:(?:\\[rn]|\s)*-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)?/g,
    group: 0,
    priority: 2,
    why: "private key blocks cut short or with a body secretlint's check refuses (it needs the whole block)",
  },
  {
    type: 'bearer-token',
    pattern: /\b(?:Bearer|Token|Bot)[ \t]+([A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=-])/g,
    group: 1,
    priority: 1,
    accept: (value) => !isPlaceholder(value) && /\d/.test(value) && /[A-Za-z]/.test(value),
    why: '`Authorization: Bearer …` headers in commands and logs, whatever issued the token',
  },
  {
    type: 'secret',
    types: ['secret', 'password'],
    pattern: ASSIGNMENT,
    group: 2,
    priority: 0,
    accept: acceptAssignment,
    typeOf: (match) => (/^(?:passw|passphrase|pwd)/i.test(match[0]) ? 'password' : 'secret'),
    why: '`KEY=value` and `Key: value` lines whose name says password, secret, token or key (gitleaks-style generic rule)',
  },
];

/** Opt-in (`--redact-pii`): personal data rather than credentials. */
export const PII_PATTERNS: readonly SecretPattern[] = [
  {
    type: 'email',
    // Not git's ssh user (git@github.com:owner/repo), which names a repository, not a person.
    pattern:
      /(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24})(?![A-Za-z0-9-])/g,
    group: 1,
    priority: 1,
    accept: (value) => !/^git@/i.test(value),
    why: 'e-mail addresses',
  },
  {
    type: 'phone',
    // International (+ and a country code) or North American ((555) 123-4567, 555-123-4567) forms;
    // bare digit runs (ids, dates, versions) are left alone.
    pattern: /(?<![\w+])(\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w-])/g,
    group: 1,
    priority: 1,
    accept: (value) => {
      const digits = value.replace(/\D/g, '').length;
      return digits >= 8 && digits <= 15;
    },
    why: 'phone numbers in international (+…) or North American form',
  },
];

/** The password of a `scheme://user:password@host` URL inside `uri`, as [start, end) of `uri`; undefined without one. */
export function urlPasswordSpan(uri: string): readonly [number, number] | undefined {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]*)@/.exec(uri);
  if (m === null || m[1] === undefined || m[1] === '') return undefined;
  const end = m[0].length - 1;
  return [end - m[1].length, end];
}

/** The spans `patterns` find in `text` (each pattern's accept applied). */
export function findPatternSpans(text: string, patterns: readonly SecretPattern[]): SecretSpan[] {
  const spans: SecretSpan[] = [];
  for (const p of patterns) {
    const re = new RegExp(p.pattern.source, p.pattern.flags.includes('d') ? p.pattern.flags : `${p.pattern.flags}d`);
    for (const m of text.matchAll(re)) {
      const at = m.indices?.[p.group];
      const value = m[p.group];
      if (at === undefined || value === undefined) continue;
      if (p.accept !== undefined && !p.accept(value, m as RegExpExecArray)) continue;
      spans.push({ start: at[0], end: at[1], type: p.typeOf?.(m as RegExpExecArray) ?? p.type, priority: p.priority });
    }
  }
  return spans;
}

/** A secret found in a text, with its type: what redacting it replaced. */
export interface FoundSecret {
  readonly value: string;
  readonly type: string;
}

/**
 * The values `redacted` replaced in `original`: the text between the literal pieces the two share.
 * @example secretsReplaced('key AKIA…X end', 'key [REDACTED:aws-access-key] end') // [{ value: 'AKIA…X', type: 'aws-access-key' }]
 */
export function secretsReplaced(original: string, redacted: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  // [literal, type, literal, type, …, literal]: each type stands between two literals of the original.
  const parts = redacted.split(/\[REDACTED:([a-z0-9-]+)\]/);
  let at = 0;
  for (let i = 0; i < parts.length - 1; i += 2) {
    const [literal, type, next] = [parts[i] ?? '', parts[i + 1] ?? '', parts[i + 2] ?? ''];
    const start = original.indexOf(literal, at);
    if (start < 0) break;
    const from = start + literal.length;
    // The last literal ends the original; any other is its first occurrence after the secret.
    const end = i + 2 === parts.length - 1 ? original.length - next.length : original.indexOf(next, from);
    if (end < from) break;
    const value = original.slice(from, end);
    if (value !== '' && !value.startsWith('[REDACTED:')) found.push({ value, type });
    at = end;
  }
  return found;
}

/** Fragments shorter than this are not looked for: too many words share 8 characters with a token. */
export const MIN_FRAGMENT = 12;

/**
 * Redacts what is left of known secrets where no rule sees them any more: a text cut inside a token
 * (an entity named from the first 60 characters of what it holds, a summary cut at its bound)
 * keeps the token's start, and `limbic redact` takes what it found elsewhere in the memory out of
 * such texts too. A fragment is the secret's first MIN_FRAGMENT or more characters.
 */
export function redactFragments(text: string, secrets: readonly FoundSecret[]): { text: string; counts: RedactionCount[] } {
  const spans: SecretSpan[] = [];
  for (const s of secrets) {
    if (s.value.length < MIN_FRAGMENT) continue;
    const head = s.value.slice(0, MIN_FRAGMENT);
    for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, at + 1)) {
      let end = at + MIN_FRAGMENT;
      while (end < text.length && end - at < s.value.length && text[end] === s.value[end - at]) end++;
      spans.push({ start: at, end, type: s.type, priority: 2 });
    }
  }
  return replaceSpans(text, spans);
}
