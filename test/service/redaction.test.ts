/**
 * The redactor over secretlint's recommended preset and Limbic's additions (src/service/redaction.ts,
 * src/core/text/redaction.ts): one planted value per type, near-misses that must stay, PII only when
 * asked, idempotence, and texts joined into one pass giving what each alone gives.
 */
import { describe, expect, it } from 'vitest';
import { NO_REDACTION, redactedMark } from '../../src/core/text/redaction.js';
import { SECRETLINT_TYPES, SecretlintRedactor, createRedactor } from '../../src/service/redaction.js';
import { GCP_JSON, NEAR_MISSES, PII, PLANTED } from './redaction-samples.js';

const redactor = new SecretlintRedactor();
const one = async (text: string, r = redactor) => {
  const out = await r.redactAll([text]);
  return { text: out.texts[0] ?? '', counts: out.counts };
};

describe('the redactor', () => {
  it.each(PLANTED.map((p) => [p.type, p] as const))('redacts a planted %s, and only the secret', async (type, p) => {
    const { text, counts } = await one(p.text);
    expect(text).not.toContain(p.secret);
    expect(text).toBe(p.text.replace(p.secret, redactedMark(type)));
    expect(counts).toEqual([{ type, count: 1 }]);
  });

  it('redacts the private key inside a pasted GCP service-account JSON', async () => {
    const { text, counts } = await one(GCP_JSON);
    expect(text).toBe(`{"type": "service_account", "private_key": "${redactedMark('private-key')}\\n"}`);
    expect(counts).toEqual([{ type: 'private-key', count: 1 }]);
  });

  it('redacts a private key block cut short (a tool summary keeps its first lines)', async () => {
    const cut =
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACB';
    const { text } = await one(`cat ~/.ssh/id_ed25519 →\n${cut}`);
    expect(text).toBe(`cat ~/.ssh/id_ed25519 →\n${redactedMark('private-key')}`);
  });

  it('keeps the host and user of a connection string: only its password goes', async () => {
    const { text } = await one(
      'mongodb+srv://app:Tr0ub4dor3@cluster0.example.mongodb.net/shop and mysql://root:hunter2hunter2@localhost/db',
    );
    expect(text).toBe(
      `mongodb+srv://app:${redactedMark('password')}@cluster0.example.mongodb.net/shop and mysql://root:${redactedMark('password')}@localhost/db`,
    );
  });

  it.each(NEAR_MISSES.map((t) => [t]))('leaves %j as it is', async (t) => {
    expect(await one(t)).toEqual({ text: t, counts: [] });
  });

  it('leaves e-mail addresses and phone numbers unless PII redaction is on', async () => {
    const pii = new SecretlintRedactor({ pii: true });
    for (const p of PII) {
      expect(await one(p.text)).toEqual({ text: p.text, counts: [] });
      const { text, counts } = await one(p.text, pii);
      expect(text).toBe(p.text.replace(p.secret, redactedMark(p.type)));
      expect(counts).toEqual([{ type: p.type, count: 1 }]);
    }
    for (const t of NEAR_MISSES) expect((await one(t, pii)).text).toBe(t);
  });

  it('changes and counts nothing in text it already redacted', async () => {
    for (const p of PLANTED) {
      const once = await one(p.text);
      expect(await one(once.text)).toEqual({ text: once.text, counts: [] });
    }
  });

  it('gives each text of a joined pass what it gives alone, and sums the counts', async () => {
    const texts = [...PLANTED.map((p) => p.text), ...NEAR_MISSES, 'short', ''];
    const together = await redactor.redactAll(texts);
    const alone = await Promise.all(texts.map((t) => one(t)));
    expect(together.texts).toEqual(alone.map((a) => a.text));
    expect(together.counts.reduce((n, c) => n + c.count, 0)).toBe(PLANTED.length);
  });

  it('finds a secret split over two texts in neither (joining makes no match)', async () => {
    const token = PLANTED.find((p) => p.type === 'github-token')?.secret ?? '';
    const texts = [`token ${token.slice(0, 20)}`, `${token.slice(20)} end`];
    expect((await redactor.redactAll(texts)).texts).toEqual(texts);
  });

  it('does not scan plain prose: a search query of words loads no rule', async () => {
    const fresh = new SecretlintRedactor();
    const query = 'what does the user prefer for the deploy pipeline on fridays';
    expect(await fresh.redactAll([query, 'short'])).toEqual({ texts: [query, 'short'], counts: [] });
    expect(fresh.loaded).toBe(false);
    await fresh.redactAll(['DB_PASSWORD=hunter2']);
    expect(fresh.loaded).toBe(true);
  });

  it('is a null object when off: texts pass unchanged and nothing loads', async () => {
    const off = createRedactor(false);
    expect(off).toBe(NO_REDACTION);
    const text = PLANTED[0]?.text ?? '';
    expect(await off.redactAll([text])).toEqual({ texts: [text], counts: [] });
  });

  it('names a type for every message of the preset it runs', async () => {
    const preset = await import('@secretlint/secretlint-rule-preset-recommend');
    const ids = preset.rules
      .filter((r) => r.meta.id !== '@secretlint/secretlint-rule-filter-comments')
      .flatMap((r) => Object.keys(r.messages));
    expect(ids.filter((id) => SECRETLINT_TYPES[id] === undefined)).toEqual([]);
  });

  it('cannot be switched off by the text itself (secretlint-disable comments)', async () => {
    const p = PLANTED.find((x) => x.type === 'github-token');
    const text = `// secretlint-disable\n${p?.text ?? ''}`;
    expect((await one(text)).text).not.toContain(p?.secret);
  });
});

describe("secretlint's profiler (secretlint#1633, #1653)", () => {
  it('is off: redacting writes leaves no marks behind, so the hundredth write costs what the first did', async () => {
    const { performance } = await import('node:perf_hooks');
    const quiet = new SecretlintRedactor();
    const planted = PLANTED[0] as (typeof PLANTED)[number];
    const before = performance.getEntriesByType('mark').length;
    for (let i = 0; i < 100; i++) {
      const out = await quiet.redactAll([`garden noted by client ${i} at call ${i}`, planted.text]);
      expect(out.texts[1]).not.toContain(planted.secret); // still redacting
    }
    // The profiler's own list of marks is what each new mark was compared with; it grows with Node's.
    const { secretLintProfiler } = (await import('@secretlint/profiler')) as unknown as {
      secretLintProfiler: { getEntries(): Promise<readonly unknown[]> };
    };
    expect(performance.getEntriesByType('mark').length - before).toBe(0);
    expect((await secretLintProfiler.getEntries()).length).toBe(0);
  });
});
