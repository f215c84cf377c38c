/**
 * The docs name the MCP SDK the server runs (issue 33): docs/mcp-app.md said the server "keeps the v1
 * SDK" after it moved to v2. The server's SDK is what package.json gives it at run time; the v1 SDK
 * is a test-only dependency (the 2025-era client of the differential test), and no doc may say the
 * server uses it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Sentences that put the server (or Limbic, or its resource) on the v1 SDK. */
const SERVER_ON_V1 = /(?:server|limbic|resource)\b[^.]*\b(?:keeps|uses|runs on|registers[^.]*with) the v1 (?:MCP )?SDK/i;

describe('the MCP SDK the docs name', () => {
  it('is the v2 server package at run time, the v1 SDK only for tests', () => {
    expect(Object.keys(pkg.dependencies)).toContain('@modelcontextprotocol/server');
    expect(Object.keys(pkg.dependencies)).not.toContain('@modelcontextprotocol/sdk');
    expect(Object.keys(pkg.devDependencies)).toContain('@modelcontextprotocol/sdk');
  });

  it('is never the v1 SDK for the server, in any doc', () => {
    const docs = ['README.md', 'DEPENDENCIES.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).map((f) => join('docs', f))];
    const claims = docs.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .replace(/\s+/g, ' ')
        .split(/(?<=[.;])\s/)
        .filter((sentence) => SERVER_ON_V1.test(sentence))
        .map((sentence) => `${file}: ${sentence}`),
    );
    expect(claims).toEqual([]);
  });
});
