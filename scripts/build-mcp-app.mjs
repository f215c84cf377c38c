// Builds the view of Limbic's MCP App (docs/mcp-app.md) into one self-contained HTML file,
// dist/mcp/app/explain-view.html, which the server sends as the ui:// resource. Run by `npm run build`
// after tsc: the ext-apps App and esbuild are devDependencies, so an installed Limbic reads the built
// file and never needs them, nor the network.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const VIEW = join(ROOT, 'src', 'mcp', 'app', 'view');
const OUT = join(ROOT, 'dist', 'mcp', 'app', 'explain-view.html');

const bundle = await build({
  entryPoints: [join(VIEW, 'explain-view.js')],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  write: false,
  logLevel: 'warning',
});
const [script] = bundle.outputFiles;
if (script === undefined) throw new Error('esbuild wrote no bundle for the MCP App view');

// Inline text cannot hold "</script" or "</style": the HTML parser would end the element there.
const inline = (text, tag) => text.replaceAll(`</${tag}`, `<\\/${tag}`);
const css = readFileSync(join(VIEW, 'explain-view.css'), 'utf8');
const html = readFileSync(join(VIEW, 'explain-view.html'), 'utf8')
  .replace('<!-- style -->', () => `<style>\n${inline(css, 'style')}</style>`)
  .replace('<!-- script -->', () => `<script>\n${inline(script.text, 'script')}</script>`);

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, html);
console.error(`MCP App view: ${OUT} (${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB)`);
