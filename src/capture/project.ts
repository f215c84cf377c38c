/**
 * Which project a folder belongs to, without configuration (docs/capture.md, "Projects"): an
 * explicit setting (LIMBIC_PROJECT / --project), else a `.limbic-project` file in the folder or
 * above it (inside the repository), else the git remote (normalised, so the ssh and https spellings
 * of one repository agree), else the git common dir (so every worktree of one repository is one
 * project), else the folder itself.
 *
 * Git's own files are read (`.git` as a folder, or a file saying `gitdir:`; `commondir`; `config`'s
 * `[remote "origin"]`, else its first remote): no `git` process, so a hook that resolves the project
 * on every prompt stays fast and works where git is not installed.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, parse, resolve } from 'node:path';

export interface Project {
  /** What entities store in their `project` column: `github.com/acme/shop`, or an absolute path. */
  readonly key: string;
  /** A short name for people: the repository's or the folder's. */
  readonly name: string;
  /** The folder the project was found at: the repository's worktree root, the pin file's folder, or the folder. */
  readonly root: string;
  readonly from: 'explicit' | 'git-remote' | 'git-dir' | 'folder';
}

export interface ResolveOptions {
  /** The explicit setting (LIMBIC_PROJECT / --project): a project key, or a remote URL (normalised). */
  readonly explicit?: string | undefined;
  /** The user's home folder: a folder resolving to it (or to `/`) is outside any project. */
  readonly home?: string | undefined;
}

/** The explicit setting that means no project: searches hide nothing, captures stay global. */
export const ALL_PROJECTS = '*';

/** The file that pins a folder tree to a project key (its first line that is not blank or a `#` comment). */
export const PROJECT_FILE = '.limbic-project';

/** Hosts whose repository paths are case-insensitive: `Acme/Shop` and `acme/shop` are one repository. */
const CASE_INSENSITIVE_HOSTS = new Set(['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org']);

/**
 * The project a folder belongs to, or undefined outside any project: the explicit setting `*`, or no
 * explicit setting and the folder resolves to `/` or to the home folder (a home kept in git for its
 * dotfiles is no project).
 * @example await resolveProject('/src/shop/web') // { key: 'github.com/acme/shop', name: 'shop', from: 'git-remote', … }
 */
export async function resolveProject(cwd: string, options: ResolveOptions = {}): Promise<Project | undefined> {
  const folder = resolve(cwd);
  const explicit = options.explicit?.trim();
  // "*": every project at once, which is no project: nothing hidden, nothing captured into one.
  if (explicit === ALL_PROJECTS) return undefined;
  if (explicit !== undefined && explicit !== '') return projectFromKey(explicit, folder, 'explicit');

  const repo = await findRepository(folder);
  const pinned = await findPinFile(folder, repo?.root, options.home);
  if (pinned !== undefined) return projectFromKey(pinned.key, pinned.root, 'explicit');

  const outside = (root: string): boolean => root === parse(root).root || (options.home !== undefined && root === resolve(options.home));
  if (repo !== undefined) {
    if (outside(repo.root)) return undefined;
    const remote = await readRemoteUrl(join(repo.commonDir, 'config'));
    const key = remote === undefined ? undefined : normaliseRemote(remote, repo.root);
    if (key !== undefined) return { key, name: lastSegment(key), root: repo.root, from: 'git-remote' };
    // Worktrees share the common dir; the project is named for the main worktree's folder.
    const main = basename(repo.commonDir) === '.git' ? dirname(repo.commonDir) : repo.commonDir;
    return { key: main, name: basename(main), root: repo.root, from: 'git-dir' };
  }
  if (outside(folder)) return undefined;
  return { key: folder, name: basename(folder), root: folder, from: 'folder' };
}

/** An explicit key: a remote URL is normalised as a remote would be, anything else kept as given. */
function projectFromKey(given: string, root: string, from: 'explicit'): Project {
  const key = looksLikeRemote(given) ? (normaliseRemote(given, root) ?? given) : given.replace(/(?<!\/)\/+$/, '') || given;
  return { key, name: lastSegment(key), root, from };
}

const looksLikeRemote = (s: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || scpLike(s);

/**
 * `user@host:path`: a run of name characters holding an `@` inside it, then a colon. Read in two
 * steps, not as `[^/\s:]+@[^/\s:]+:`, which splits a run of `@` in every way (issue 35).
 */
function scpLike(s: string): boolean {
  const name = /^[^/\s:]+(?=:)/.exec(s)?.[0];
  return name !== undefined && name.slice(1, -1).includes('@');
}

const lastSegment = (key: string): string =>
  key
    .split('/')
    .filter((s) => s !== '')
    .at(-1) ?? key;

/**
 * A remote URL as a project key: `host/path`, host lowercased, no user, password, port, scheme or
 * `.git`; a local remote (a path, `file://`) becomes its absolute path. Undefined when nothing can
 * be read from it.
 * @example normaliseRemote('git@github.com:acme/shop.git') // 'github.com/acme/shop'
 * @example normaliseRemote('https://user:token@GitHub.com/acme/shop/') // 'github.com/acme/shop'
 */
export function normaliseRemote(url: string, repoRoot?: string): string | undefined {
  const text = url.trim();
  if (text === '') return undefined;
  let host: string;
  let path: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(text);
  if (scheme !== null) {
    const protocol = (scheme[1] ?? '').toLowerCase();
    const rest = scheme[2] ?? '';
    if (protocol === 'file') return stripGit(resolve(decodeURIComponent(rest.replace(/^[^/]*(?=\/)/, ''))));
    const slash = rest.indexOf('/');
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    path = slash < 0 ? '' : rest.slice(slash + 1);
    // user:password@host:port — the credentials must never reach a stored key.
    host = authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '');
    if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1);
  } else {
    // scp-like syntax, [user@]host:path, which git reads only when no slash precedes the first colon.
    const scp = /^(?:[^@/]+@)?([^/:]+):(?!\/\/)(.*)$/.exec(text);
    if (scp !== null && !/^[a-z]$/i.test(scp[1] ?? '')) {
      host = scp[1] ?? '';
      path = scp[2] ?? '';
    } else {
      // A local path (a Windows drive letter too), relative to the repository.
      return stripGit(isAbsolute(text) || repoRoot === undefined ? resolve(text) : resolve(repoRoot, text));
    }
  }
  host = host.toLowerCase();
  const clean = stripGit(
    path
      .replace(/[?#].*$/, '')
      .replace(/^~[^/]*\//, '')
      .split('/')
      .filter((s) => s !== '' && s !== '.')
      .join('/'),
  );
  if (host === '' || clean === '') return undefined;
  return `${host}/${CASE_INSENSITIVE_HOSTS.has(host) ? clean.toLowerCase() : clean}`;
}

const stripGit = (path: string): string => path.replace(/(?<!\/)\/+$/, '').replace(/\.git$/i, '') || path;

interface Repository {
  /** The worktree's top folder (where `.git` is). */
  readonly root: string;
  /** The folder holding config, objects and refs, shared by all worktrees. */
  readonly commonDir: string;
}

/** The nearest `.git` at or above the folder, followed to its common dir; undefined outside git. */
async function findRepository(folder: string): Promise<Repository | undefined> {
  for (let dir = folder; ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    const info = await stat(dotGit).catch(() => undefined);
    if (info?.isDirectory() === true) return { root: dir, commonDir: await commonDirOf(dotGit) };
    if (info?.isFile() === true) {
      // A worktree or a submodule: `gitdir: <path>`, relative to the folder holding the file.
      const line = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
      if (line?.[1] !== undefined) return { root: dir, commonDir: await commonDirOf(resolve(dir, line[1])) };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** A git dir's `commondir` file names the shared folder (relative to the git dir); without it, the git dir is it. */
async function commonDirOf(gitDir: string): Promise<string> {
  const common = (await readFile(join(gitDir, 'commondir'), 'utf8').catch(() => '')).trim();
  return common === '' ? gitDir : resolve(gitDir, common);
}

/**
 * The nearest `.limbic-project` from the folder up to the repository's root (inclusive), or outside
 * git up to, not including, the home folder or `/`.
 */
async function findPinFile(
  folder: string,
  repoRoot: string | undefined,
  home: string | undefined,
): Promise<{ key: string; root: string } | undefined> {
  const stopBefore = home === undefined ? undefined : resolve(home);
  for (let dir = folder; ; dir = dirname(dir)) {
    if (repoRoot === undefined && (dir === stopBefore || dirname(dir) === dir)) return undefined;
    const text = await readFile(join(dir, PROJECT_FILE), 'utf8').catch(() => undefined);
    const key = text
      ?.split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l !== '' && !l.startsWith('#'));
    if (key !== undefined) return { key, root: dir };
    if (dir === repoRoot || dirname(dir) === dir) return undefined;
  }
}

/**
 * The URL of `[remote "origin"]` in a git config file, else of the first remote that has one.
 * Git's syntax as far as remotes need it: sections, `key = value`, quotes, `#`/`;` comments.
 */
export async function readRemoteUrl(configPath: string): Promise<string | undefined> {
  const text = await readFile(configPath, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const urls = new Map<string, string>();
  let remote: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (section !== null) {
      const name = (section[1] ?? '').toLowerCase();
      // [remote "origin"], or the old spelling [remote.origin]
      remote = name === 'remote' ? section[2]?.replace(/\\(.)/g, '$1') : name.startsWith('remote.') ? name.slice(7) : undefined;
      continue;
    }
    if (remote === undefined) continue;
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (entry === null || (entry[1] ?? '').toLowerCase() !== 'url' || urls.has(remote)) continue;
    urls.set(remote, gitValue(entry[2] ?? ''));
  }
  return urls.get('origin') ?? urls.values().next().value;
}

/** A config value: quotes removed, escapes read, a trailing comment dropped. */
function gitValue(raw: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < raw.length) out += raw[++i] === 't' ? '\t' : raw[i] === 'n' ? '\n' : raw[i];
    else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return out.trim();
}
