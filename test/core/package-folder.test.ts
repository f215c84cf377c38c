import { describe, expect, it } from 'vitest';
import { packageFolderOf } from '../../src/core/package-folder.js';

describe('packageFolderOf', () => {
  const at =
    (...folders: string[]) =>
    (folder: string) =>
      folders.includes(folder);

  it('finds the package from any depth: dist/, src/ and the hook bundle agree', () => {
    const has = at('/opt/limbic');
    expect(packageFolderOf('/opt/limbic/dist/store/sqlite/native-modules.js', has)).toBe('/opt/limbic');
    expect(packageFolderOf('/opt/limbic/src/embed/onnx/native-runtime.ts', has)).toBe('/opt/limbic');
    expect(packageFolderOf('/opt/limbic/dist/cli/hook.js', has)).toBe('/opt/limbic');
  });

  it('takes the nearest package.json: an npx install inside another package', () => {
    const has = at('/home/me/.npm/_npx/3f2a/node_modules/limbic', '/home/me/.npm/_npx/3f2a');
    expect(packageFolderOf('/home/me/.npm/_npx/3f2a/node_modules/limbic/dist/cli/hook.js', has)).toBe(
      '/home/me/.npm/_npx/3f2a/node_modules/limbic',
    );
  });

  it('reads Windows paths', () => {
    expect(packageFolderOf('C:\\limbic\\dist\\cli\\hook.js', at('C:\\limbic'))).toBe('C:\\limbic');
    expect(packageFolderOf('C:\\x\\y.js', at('C:\\'))).toBe('C:\\');
  });

  it("answers the file's own folder when no package.json is above it, and reaches the root", () => {
    const seen: string[] = [];
    expect(packageFolderOf('/a/b/c.js', (folder) => (seen.push(folder), false))).toBe('/a/b');
    expect(seen).toEqual(['/a/b', '/a', '/']);
  });
});
