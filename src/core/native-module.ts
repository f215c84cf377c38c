/**
 * A native module that does not load (issue 33): said where it really is and with the command that
 * fixes it there. A client that timed out during the first `npx limbic` (while better-sqlite3
 * compiled) left it unbuilt in the npx cache; every later start blamed the database path, and
 * `npm rebuild` run in Limbic's own folder rebuilt nothing (the modules sit beside it, in the npx
 * folder's node_modules). Pure: the backends find the folder (createRequire) and pass it here.
 */

export interface NativeModule {
  /** The package: better-sqlite3, sqlite-vec, usearch, onnxruntime-node. */
  readonly name: string;
  /** What Limbic uses it for, for the message ("the SQLite driver"). */
  readonly role: string;
  /** Its folder (…/node_modules/<name>); undefined when it is not installed at all. */
  readonly dir: string | undefined;
  /** Compiled (or fetched) by its install script, so `npm rebuild` remakes it; else its files ship in the package. */
  readonly builds: boolean;
}

const SEPARATOR = /[\\/]/;

/** An error's first line without its closing punctuation (bindings' ends "Tried:", its list below). */
const firstLine = (error: string): string => (error.split('\n')[0] ?? error).replace(/(?<![\s:.])[\s:.]+$/, '');

/** The folder whose node_modules holds `dir`: where npm commands for it run. */
function installFolder(dir: string): string {
  const parts = dir.split(SEPARATOR);
  const at = parts.lastIndexOf('node_modules');
  return at <= 0 ? dir : dir.slice(0, parts.slice(0, at).join('/').length);
}

/** The npx cache folder (…/_npx/<hash>) that holds `dir`, when npx installed it. */
function npxFolder(dir: string): string | undefined {
  const parts = dir.split(SEPARATOR);
  const at = parts.lastIndexOf('_npx');
  return at < 0 || at + 1 >= parts.length ? undefined : dir.slice(0, parts.slice(0, at + 2).join('/').length);
}

/**
 * The command that makes `module` load again, run where it really is.
 * @example nativeModuleFix({ name: 'better-sqlite3', role: 'the SQLite driver', dir: '/h/.npm/_npx/ab12/node_modules/better-sqlite3', builds: true })
 * // 'rm -rf "/h/.npm/_npx/ab12" (npx installs Limbic afresh on its next start), or npm rebuild better-sqlite3 --prefix "/h/.npm/_npx/ab12"'
 */
export function nativeModuleFix(module: NativeModule, limbicFolder: string): string {
  if (module.dir === undefined)
    return `npm install --omit=dev --prefix "${limbicFolder}" (${module.name} is missing from Limbic's packages)`;
  const folder = installFolder(module.dir);
  const here = module.builds
    ? `npm rebuild ${module.name} --prefix "${folder}"`
    : `rm -rf "${module.dir}" && npm install --omit=dev --prefix "${folder}"`;
  const npx = npxFolder(module.dir);
  return npx === undefined ? here : `rm -rf "${npx}" (npx installs Limbic afresh on its next start), or ${here}`;
}

/** The message for a native module that failed to load with `error`: what, where, why likely, and the fix. */
export function nativeModuleFailure(module: NativeModule, error: string, limbicFolder: string): string {
  const where = module.dir === undefined ? 'is not installed' : `does not load from ${module.dir}`;
  return (
    `${module.name} (${module.role}) ${where}: ${firstLine(error)}. Its native part is missing or was built for another ` +
    `Node (an install interrupted while it compiled leaves it so); the database is not the problem. Fix: ${nativeModuleFix(module, limbicFolder)}`
  );
}

/**
 * A module's folder from the path its main file resolves to (`resolve` is the backend's
 * createRequire(import.meta.url).resolve: where Node really loads it from); undefined when it
 * resolves nowhere.
 */
export function locateNativeModule(name: string, role: string, builds: boolean, resolve: (name: string) => string): NativeModule {
  let dir: string | undefined;
  try {
    const main = resolve(name);
    const parts = main.split(SEPARATOR);
    let at = -1;
    for (let i = parts.length - 2; i >= 0 && at < 0; i--) if (parts[i] === 'node_modules' && parts[i + 1] === name) at = i + 1;
    dir = at < 0 ? undefined : main.slice(0, parts.slice(0, at + 1).join('/').length);
  } catch {
    dir = undefined;
  }
  return { name, role, dir, builds };
}
