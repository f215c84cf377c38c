/**
 * Project resolution (issue 34 item 3) against real repositories made by git itself: remotes of each
 * spelling agree, worktrees share one project, no git falls back to the folder, and `/` or the home
 * folder are outside any project.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { normaliseRemote, readRemoteUrl, resolveProject } from '../../src/capture/project.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'limbic-project-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

let n = 0;
function repo(remotes: Record<string, string> = {}): string {
  const dir = join(base, `repo-${++n}`);
  mkdirSync(dir);
  git(dir, 'init', '-q');
  for (const [name, url] of Object.entries(remotes)) git(dir, 'remote', 'add', name, url);
  return dir;
}

describe('normaliseRemote', () => {
  it('reads the ssh, scp and https spellings of one repository as one key', () => {
    const spellings = [
      'git@github.com:acme/shop.git',
      'ssh://git@github.com/acme/shop',
      'ssh://git@github.com:22/acme/shop.git',
      'https://user@github.com/acme/shop.git',
      'https://github.com/acme/shop',
      'https://GitHub.com/acme/shop/',
      'git://github.com/acme/shop.git',
    ];
    expect(new Set(spellings.map((s) => normaliseRemote(s)))).toEqual(new Set(['github.com/acme/shop']));
  });

  it('never keeps credentials, and lowercases the host', () => {
    expect(normaliseRemote('https://bob:ghp_secret@GitLab.Example.org:8443/Team/App.git')).toBe('gitlab.example.org/Team/App');
  });

  it('reads paths on github.com without case, where GitHub does', () => {
    expect(normaliseRemote('git@github.com:Acme/Shop.git')).toBe('github.com/acme/shop');
  });

  it('makes a local remote an absolute path', () => {
    expect(normaliseRemote('/srv/git/shop.git')).toBe('/srv/git/shop');
    expect(normaliseRemote('file:///srv/git/shop.git')).toBe('/srv/git/shop');
    expect(normaliseRemote('../shop.git', '/work/app')).toBe('/work/shop');
  });
});

describe('readRemoteUrl', () => {
  it('prefers origin, else takes the first remote', async () => {
    const a = repo({ upstream: 'https://github.com/up/stream.git', origin: 'git@github.com:me/fork.git' });
    expect(await readRemoteUrl(join(a, '.git', 'config'))).toBe('git@github.com:me/fork.git');
    const b = repo({ upstream: 'https://github.com/up/stream.git', mirror: 'https://example.org/m.git' });
    expect(await readRemoteUrl(join(b, '.git', 'config'))).toBe('https://github.com/up/stream.git');
  });

  it('reads quoted values and ignores comments', async () => {
    const file = join(base, 'config-quoted');
    writeFileSync(
      file,
      '[core]\n\turl = nope\n# [remote "x"]\n[remote "origin"]\n\tfetch = +refs/heads/*\n\turl = "git@example.org:a/b.git" ; note\n',
    );
    expect(await readRemoteUrl(file)).toBe('git@example.org:a/b.git');
  });
});

describe('resolveProject', () => {
  it('gives a repository cloned over ssh and one over https the same project', async () => {
    const ssh = repo({ origin: 'git@github.com:acme/shop.git' });
    const https = repo({ origin: 'https://user@github.com/acme/shop.git' });
    const a = await resolveProject(ssh);
    const b = await resolveProject(https);
    expect(a).toMatchObject({ key: 'github.com/acme/shop', name: 'shop', from: 'git-remote', root: ssh });
    expect(b?.key).toBe(a?.key);
  });

  it('resolves a subfolder of a repository to the repository', async () => {
    const dir = repo({ origin: 'https://github.com/acme/api' });
    mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
    expect(await resolveProject(join(dir, 'src', 'deep'))).toMatchObject({ key: 'github.com/acme/api', root: dir });
  });

  it('gives every worktree of a repository its project, with and without a remote', async () => {
    for (const remotes of [{ origin: 'ssh://git@github.com/acme/tree' }, {}] as Record<string, string>[]) {
      const dir = repo(remotes);
      git(dir, 'commit', '-q', '--allow-empty', '-m', 'first');
      const wt = join(base, `wt-${n}`);
      git(dir, 'worktree', 'add', '-q', wt, '-b', `feature-${n}`);
      const main = await resolveProject(dir);
      const other = await resolveProject(wt);
      expect(other?.key).toBe(main?.key);
      expect(other?.root).toBe(wt);
      if (Object.keys(remotes).length === 0) expect(main).toMatchObject({ key: dir, from: 'git-dir' });
    }
  });

  it('falls back to the folder outside git', async () => {
    const dir = join(base, 'plain', 'notes');
    mkdirSync(dir, { recursive: true });
    expect(await resolveProject(dir, { home: base })).toEqual({ key: dir, name: 'notes', root: dir, from: 'folder' });
  });

  it('is outside any project at / and in the home folder, even a home kept in git', async () => {
    expect(await resolveProject('/', { home: base })).toBeUndefined();
    const home = join(base, 'home');
    mkdirSync(home);
    expect(await resolveProject(home, { home })).toBeUndefined();
    git(home, 'init', '-q');
    git(home, 'remote', 'add', 'origin', 'git@github.com:me/dotfiles.git');
    expect(await resolveProject(home, { home })).toBeUndefined();
  });

  it('takes the explicit setting first, normalising a remote URL given there', async () => {
    const dir = repo({ origin: 'git@github.com:acme/shop.git' });
    expect(await resolveProject(dir, { explicit: 'my-team/shop' })).toMatchObject({ key: 'my-team/shop', name: 'shop', from: 'explicit' });
    expect(await resolveProject(dir, { explicit: 'https://github.com/acme/other.git' })).toMatchObject({ key: 'github.com/acme/other' });
    expect(await resolveProject('/', { explicit: 'anything' })).toMatchObject({ key: 'anything' });
    expect(await resolveProject(dir, { explicit: '*' })).toBeUndefined();
  });

  it('reads a .limbic-project file in the repository before its remote', async () => {
    const dir = repo({ origin: 'git@github.com:acme/renamed.git' });
    writeFileSync(join(dir, '.limbic-project'), '# pinned before the rename\n\ngithub.com/acme/shop\n');
    mkdirSync(join(dir, 'pkg'));
    expect(await resolveProject(join(dir, 'pkg'))).toMatchObject({ key: 'github.com/acme/shop', root: dir, from: 'explicit' });
  });

  it('does not read a .limbic-project file above the repository', async () => {
    const outer = join(base, 'outer');
    mkdirSync(outer);
    writeFileSync(join(outer, '.limbic-project'), 'outer-project\n');
    const dir = join(outer, 'inner');
    mkdirSync(dir);
    git(dir, 'init', '-q');
    expect(await resolveProject(dir, { home: base })).toMatchObject({ key: dir, from: 'git-dir' });
    const loose = join(outer, 'loose');
    mkdirSync(loose);
    expect(await resolveProject(loose, { home: base })).toMatchObject({ key: 'outer-project', root: outer });
  });
});
