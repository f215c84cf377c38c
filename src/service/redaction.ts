/**
 * The redactor every write goes through (docs/redaction.md): secretlint's recommended preset (a
 * maintained rule set: cloud keys, SaaS tokens, private keys, connection strings) plus Limbic's few
 * additions registered as secretlint rules of their own (src/core/text/redaction.ts says what each
 * adds). Secretlint is loaded at the first text to redact, so a start that writes nothing never
 * pays for it (about 70 ms here).
 *
 * The rules run once per call over all its texts joined (one pass over 1,000 observations costs
 * about 5 ms, one pass each about 400 ms); a finding that straddles two texts sends those texts
 * through again one by one, so joining never makes or hides a match.
 */
import type {
  SecretLintCoreConfigRule,
  SecretLintCoreResultMessage,
  SecretLintRuleContext,
  SecretLintRuleCreator,
  SecretLintRuleLocalizeMessages,
  SecretLintSourceCode,
} from '@secretlint/types';
import {
  EXTRA_SECRET_PATTERNS,
  NO_REDACTION,
  PII_PATTERNS,
  mayHoldSecret,
  RedactionTally,
  findPatternSpans,
  replaceSpans,
  urlPasswordSpan,
  type RedactedTexts,
  type Redactor,
  type SecretPattern,
  type SecretSpan,
} from '../core/text/redaction.js';

export interface RedactorOptions {
  /** Also e-mail addresses and phone numbers (`--redact-pii`). @default false */
  readonly pii?: boolean;
}

/**
 * Each secretlint message (by messageId) as the type its mark names, and what of the reported
 * range is the secret: the value the rule reports (`value`), only the password of a URL
 * (`url-password`: `postgres://alice:[REDACTED:password]@db/shop` keeps the host and user), or the
 * twelve digits of an `AWS_ACCOUNT_ID=…` line the rule reports whole (`account-id`).
 */
export const SECRETLINT_TYPES: Readonly<Record<string, { readonly type: string; readonly take: 'value' | 'url-password' | 'account-id' }>> =
  {
    AWSAccessKeyID: { type: 'aws-access-key', take: 'value' },
    AWSSecretAccessKey: { type: 'aws-secret-key', take: 'value' },
    AWSAccountID: { type: 'aws-account-id', take: 'account-id' },
    PrivateKeyJSON: { type: 'gcp-service-account-key', take: 'value' },
    PrivateKeyP12: { type: 'gcp-service-account-key', take: 'value' },
    PrivateKey: { type: 'private-key', take: 'value' },
    NPM_ACCESS_TOKEN: { type: 'npm-token', take: 'value' },
    Npmrc_authToken: { type: 'npm-token', take: 'value' },
    PackageJSON_xOauthToken: { type: 'github-token', take: 'value' },
    BasicAuth: { type: 'password', take: 'url-password' },
    MongoDBConnection: { type: 'password', take: 'url-password' },
    MySQLConnection: { type: 'password', take: 'url-password' },
    PostgreSQLConnection: { type: 'password', take: 'url-password' },
    SLACK_TOKEN: { type: 'slack-token', take: 'value' },
    IncomingWebhook: { type: 'slack-webhook', take: 'value' },
    SENDGRID_KEY: { type: 'sendgrid-key', take: 'value' },
    SHOPIFY_KEY: { type: 'shopify-token', take: 'value' },
    GITHUB_TOKEN: { type: 'github-token', take: 'value' },
    GITLAB_PERSONAL_ACCESS_TOKEN: { type: 'gitlab-token', take: 'value' },
    GRAFANA_CLOUD_API_TOKEN: { type: 'grafana-token', take: 'value' },
    GRAFANA_SERVICE_ACCOUNT_TOKEN: { type: 'grafana-token', take: 'value' },
    OPENAI_TOKEN: { type: 'openai-key', take: 'value' },
    ANTHROPIC_API_KEY: { type: 'anthropic-key', take: 'value' },
    GROQ_API_KEY: { type: 'groq-key', take: 'value' },
    HUGGINGFACE_USER_ACCESS_TOKEN: { type: 'huggingface-token', take: 'value' },
    LINEAR_API_TOKEN: { type: 'linear-key', take: 'value' },
    NOTION_INTEGRATION_TOKEN: { type: 'notion-token', take: 'value' },
    OPS_TOKEN: { type: '1password-token', take: 'value' },
    HASHICORP_VAULT_SERVICE_TOKEN: { type: 'vault-token', take: 'value' },
    HASHICORP_VAULT_BATCH_TOKEN: { type: 'vault-token', take: 'value' },
    HASHICORP_VAULT_RECOVERY_TOKEN: { type: 'vault-token', take: 'value' },
    VERCEL_PERSONAL_ACCESS_TOKEN: { type: 'vercel-token', take: 'value' },
    VERCEL_INTEGRATION_TOKEN: { type: 'vercel-token', take: 'value' },
    VERCEL_APP_ACCESS_TOKEN: { type: 'vercel-token', take: 'value' },
    VERCEL_APP_REFRESH_TOKEN: { type: 'vercel-token', take: 'value' },
    VERCEL_AI_GATEWAY_API_KEY: { type: 'vercel-token', take: 'value' },
    DATABRICKS_PERSONAL_ACCESS_TOKEN: { type: 'databricks-token', take: 'value' },
    DOCKER_PERSONAL_ACCESS_TOKEN: { type: 'docker-token', take: 'value' },
    FIGMA_PERSONAL_ACCESS_TOKEN: { type: 'figma-token', take: 'value' },
  };

/**
 * Preset rules left out: the comment filter lets text switch redaction off
 * (`secretlint-disable`), and text stored in a memory must not be able to do that.
 */
export const LEFT_OUT_RULES: readonly string[] = ['@secretlint/secretlint-rule-filter-comments'];

/** Between two joined texts: a line break and a NUL, which none of the rules' patterns cross. */
const SEPARATOR = '\n\u0000\n';
/** No rule matches text this short ("pwd=abc1" is the shortest finding of any rule), so it is not scanned. */
const MIN_SCANNED = 8;

/** Limbic's patterns as a secretlint rule: one messageId per type, the value's place as the range. */
function patternRule(id: string, patterns: readonly SecretPattern[]): SecretLintRuleCreator {
  const messages: SecretLintRuleLocalizeMessages = Object.fromEntries(
    patterns.flatMap((p) => p.types ?? [p.type]).map((type) => [type, { en: () => `found ${type}` }]),
  );
  return {
    messages,
    meta: { id, type: 'scanner', recommended: true, supportedContentTypes: ['text'] },
    create(context: SecretLintRuleContext) {
      const t = context.createTranslator(messages);
      return {
        file(source: SecretLintSourceCode) {
          for (const span of findPatternSpans(source.content, patterns)) {
            // The priority travels in the message id's data (read back in spansOf).
            context.report({ message: t(span.type, { PRIORITY: span.priority ?? 1 }), range: [span.start, span.end] });
          }
        },
      };
    },
  };
}

export const EXTRA_RULE_ID = '@limbic/secretlint-rule-extra';
export const PII_RULE_ID = '@limbic/secretlint-rule-pii';

type Lint = (content: string) => Promise<readonly SecretLintCoreResultMessage[]>;

/** What of secretlint's profiler (a module-wide singleton) Limbic touches: 12.x has only `mark`, 13.x adds `setEnabled`. */
interface SecretlintProfiler {
  mark: (marker: unknown) => void;
  setEnabled?: (enabled: boolean) => void;
}

/**
 * Turns secretlint's profiler off. @secretlint/core marks the start and end of every rule on every
 * text it lints (69 marks a write here), whether or not anyone reads the profile, and 12.x's
 * profiler keeps each mark it observes and scans all of them at every new one, while Node's
 * performance timeline keeps every mark too (secretlint#1633, #1653). In a server that redacts
 * every write, each write then cost more main-thread time than the one before, and memory grew
 * without bound. 13.x can be switched off (`setEnabled(false)`), but needs Node 22; on 12.x a mark
 * is made to do nothing. No rule's findings depend on the profiler.
 */
export function quietProfiler(profiler: SecretlintProfiler): void {
  if (typeof profiler.setEnabled === 'function') profiler.setEnabled(false);
  else profiler.mark = () => undefined;
}

async function loadEngine(options: RedactorOptions): Promise<Lint> {
  const [{ lintSource }, preset, { secretLintProfiler }] = await Promise.all([
    import('@secretlint/core'),
    import('@secretlint/secretlint-rule-preset-recommend'),
    import('@secretlint/profiler'),
  ]);
  quietProfiler(secretLintProfiler as SecretlintProfiler);
  const rules: SecretLintCoreConfigRule[] = preset.rules
    .filter((rule) => !LEFT_OUT_RULES.includes(rule.meta.id))
    .map((rule) => ({
      id: rule.meta.id,
      rule: rule as SecretLintRuleCreator,
      // An AWS access key id is half a credential; the preset looks for it only when asked.
      options: rule.meta.id === '@secretlint/secretlint-rule-aws' ? { enableIDScanRule: true } : {},
    }));
  rules.push({ id: EXTRA_RULE_ID, rule: patternRule(EXTRA_RULE_ID, EXTRA_SECRET_PATTERNS), options: {} });
  if (options.pii === true) rules.push({ id: PII_RULE_ID, rule: patternRule(PII_RULE_ID, PII_PATTERNS), options: {} });
  const config = { rules };
  return async (content) => {
    const result = await lintSource({
      // A name no rule reads a file for (.p12), nor treats as a config file (.json, .npmrc); nothing is read from disk.
      source: { filePath: 'limbic-memory.txt', content, contentType: 'text', ext: '.txt' },
      options: { config, noPhysicFilePath: true, maskSecrets: false },
    });
    return result.messages;
  };
}

/** The rule's short name, for a message this version's table does not know (a newer preset). */
const shortName = (ruleId: string): string => ruleId.replace(/^@[^/]+\//, '').replace(/^secretlint-rule-/, '');

/** Where in `content` the secret of one message is, and its type; undefined when there is none (a URL without password). */
export function spanOf(message: SecretLintCoreResultMessage, content: string): SecretSpan | undefined {
  const [start, end] = message.range;
  const data = (message.data ?? {}) as Record<string, unknown>;
  if (message.ruleId === EXTRA_RULE_ID || message.ruleId === PII_RULE_ID) {
    return { start, end, type: message.messageId, priority: typeof data.PRIORITY === 'number' ? data.PRIORITY : 1 };
  }
  const known = SECRETLINT_TYPES[message.messageId];
  const type = known?.type ?? shortName(message.ruleId);
  if (known?.take === 'url-password') {
    const password = urlPasswordSpan(content.slice(start, end));
    return password === undefined ? undefined : { start: start + password[0], end: start + password[1], type, priority: 2 };
  }
  if (known?.take === 'account-id') {
    const digits = /\d{4}-?\d{4}-?\d{4}/.exec(content.slice(start, end));
    return digits === null ? undefined : { start: start + digits.index, end: start + digits.index + digits[0].length, type, priority: 2 };
  }
  // The value the rule reports, found from the range's start: a rule's range can start at the
  // key's name rather than at the value (secretlint's AWS secret key rule does).
  let best: SecretSpan | undefined;
  for (const value of Object.values(data)) {
    if (typeof value !== 'string' || value.length < 8) continue;
    const at = content.indexOf(value, start);
    if (at < 0 || at > end) continue;
    if (best === undefined || value.length > best.end - best.start) best = { start: at, end: at + value.length, type, priority: 2 };
  }
  return best ?? { start, end, type, priority: 2 };
}

/** The redactor over secretlint (see the module comment). */
export class SecretlintRedactor implements Redactor {
  readonly enabled = true;
  private engine: Promise<Lint> | undefined;

  constructor(private readonly options: RedactorOptions = {}) {}

  /** Whether the rules are loaded (they load at the first text that may hold a secret). */
  get loaded(): boolean {
    return this.engine !== undefined;
  }

  /** Loads the rules now rather than at the first write (a server warms it after start-up). */
  warm(): Promise<void> {
    return this.lint().then(() => undefined);
  }

  async redactAll(texts: readonly string[]): Promise<RedactedTexts> {
    const scanned = texts.flatMap((text, i) => (text.length >= MIN_SCANNED && mayHoldSecret(text) ? [i] : []));
    if (scanned.length === 0) return { texts, counts: [] };
    const lint = await this.lint();
    const spans = new Map<number, SecretSpan[]>();
    const again = new Set<number>();
    // Where each scanned text starts in the joined content.
    const starts: number[] = [];
    let content = '';
    for (const i of scanned) {
      if (content !== '') content += SEPARATOR;
      starts.push(content.length);
      content += texts[i] ?? '';
    }
    const owner = (offset: number): number => {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if ((starts[mid] ?? 0) <= offset) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    for (const message of await lint(content)) {
      const span = spanOf(message, content);
      if (span === undefined) continue;
      const k = owner(span.start);
      const i = scanned[k] ?? 0;
      const from = starts[k] ?? 0;
      const length = (texts[i] ?? '').length;
      if (span.end > from + length) {
        for (let j = k; j < starts.length && (starts[j] ?? 0) < span.end; j++) again.add(scanned[j] ?? 0);
        continue;
      }
      const list = spans.get(i) ?? [];
      list.push({ ...span, start: span.start - from, end: span.end - from });
      spans.set(i, list);
    }
    for (const i of again) {
      const text = texts[i] ?? '';
      spans.set(
        i,
        (await lint(text)).flatMap((m) => spanOf(m, text) ?? []),
      );
    }
    const tally = new RedactionTally();
    const out = texts.map((text, i) => {
      const found = spans.get(i);
      if (found === undefined || found.length === 0) return text;
      const replaced = replaceSpans(text, found);
      tally.add(replaced.counts);
      return replaced.text;
    });
    return { texts: out, counts: tally.counts() };
  }

  private lint(): Promise<Lint> {
    this.engine ??= loadEngine(this.options);
    return this.engine;
  }
}

/** The redactor a Config asks for: secretlint's when on, the null object when off. */
export function createRedactor(enabled: boolean, options: RedactorOptions = {}): Redactor {
  return enabled ? new SecretlintRedactor(options) : NO_REDACTION;
}
