import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** The server and the CLI, bundled as one CommonJS file next to the loader (dist/bundle/main.js). */
export const BUNDLE_FILE = 'snapshot-webhook.js';
/** V8's code cache for the bundle, made at build time by make-code-cache.js. */
export const CODE_CACHE_FILE = `${BUNDLE_FILE}.cache`;

/** What happened to the code cache at start: logged in the "serving" line. */
export type CodeCacheStatus = 'used' | 'rejected' | 'absent';
const STATUS = Symbol.for('snapshot-webhook.code-cache');

export function codeCacheStatus(): CodeCacheStatus | 'not bundled' {
  return (globalThis as { [STATUS]?: CodeCacheStatus })[STATUS] ?? 'not bundled';
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    // No cache (a build without one, or a copied bundle): V8 compiles the source as usual.
    return undefined;
  }
}

/**
 * Compiles the bundle with V8's code cache, as Node's own CommonJS loader would compile it but without the
 * parse: Node 20 has no compile cache of its own (`module.enableCompileCache` is Node 22). V8 rejects a cache
 * made by another Node version or with other V8 flags; the source is then compiled as usual, only slower.
 */
export function compileBundle(dir: string): { script: Script; file: string; status: CodeCacheStatus } {
  const file = join(dir, BUNDLE_FILE);
  // A leading `#!` line is valid only at the very start of a script: kept as a comment (same length).
  const source = readFileSync(file, 'utf8').replace(/^#!/, '//');
  const cachedData = readCache(join(dir, CODE_CACHE_FILE));
  // The same wrapper as Node's CommonJS loader: the bundle sees exports, require, module and its own paths.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n})`;
  const script = new Script(wrapped, { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  const status = cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'used';
  return { script, file, status };
}

/** Runs the compiled bundle as a CommonJS module; `require` resolves from the bundle's folder. */
export function runBundle({ script, file, status }: ReturnType<typeof compileBundle>): void {
  (globalThis as { [STATUS]?: CodeCacheStatus })[STATUS] = status;
  const module = { exports: {} };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
}
