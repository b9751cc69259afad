import { readFileSync } from 'node:fs';

let version: string | undefined;

/** The version field of the package.json in `dir`, if there is one with a version. */
function versionIn(dir: URL): string | undefined {
  try {
    const parsed = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The package's version, from the nearest package.json above this module that has one: the project's for the
 * sources and the compiled output, the bundle's own (dist/bundle/package.json, written by the build with the
 * project's version) for the bundle and its chunks.
 */
export function packageVersion(): string {
  if (version === undefined) {
    let dir = new URL('.', import.meta.url);
    for (let up = 0; up < 4 && version === undefined; up++, dir = new URL('..', dir)) version = versionIn(dir);
    version ??= 'unknown';
  }
  return version;
}
