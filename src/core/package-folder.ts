/**
 * Limbic's package folder, found from a module's own path by walking up to the nearest package.json:
 * the same answer from src/ (tsx), from dist/, and from a bundle of dist/ (the hooks' runtime,
 * scripts/build-hook.mjs), where counting `../..` from the module would land at another depth.
 * Pure: the caller says whether a folder holds a package.json (src/core uses no Node built-ins).
 */

/** The folder holding `path`, for / and \ alike; the root is its own parent. */
function parentOf(path: string): string {
  if (/^([\\/]|[A-Za-z]:[\\/])$/.test(path)) return path;
  const trimmed = path.replace(/(?<![\\/])[\\/]+$/, '');
  const cut = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  if (cut < 0) return path;
  // "/x" → "/", "C:\x" → "C:\": keep the root's separator.
  return cut === 0 || /^[A-Za-z]:$/.test(trimmed.slice(0, cut)) ? trimmed.slice(0, cut + 1) : trimmed.slice(0, cut);
}

/**
 * The nearest folder at or above `file`'s own that holds a package.json; `file`'s folder itself
 * when none does (never throws: the answer only names places in messages and finds sibling files).
 * @example packageFolderOf('/opt/limbic/dist/cli/hook.js', (d) => d === '/opt/limbic') // '/opt/limbic'
 */
export function packageFolderOf(file: string, hasPackageJson: (folder: string) => boolean): string {
  const start = parentOf(file);
  for (let folder = start; ;) {
    if (hasPackageJson(folder)) return folder;
    const up = parentOf(folder);
    if (up === folder) return start;
    folder = up;
  }
}
