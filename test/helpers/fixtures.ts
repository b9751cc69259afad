import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassIndex } from '../../src/classes/class-index.js';
import { loadStaticClasses } from '../../src/classes/static-classes.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

export function filesUnder(dir: string, suffix = '.json'): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) return filesUnder(full, suffix);
      return name.endsWith(suffix) ? [full] : [];
    });
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

export function fixtureName(file: string): string {
  return relative(FIXTURES, file);
}

/** The class sets fixtures name: a folder of manifests, or `unavailable` (a cache that cannot answer). */
export function classSet(name: string): ClassIndex {
  if (name === 'unavailable') return new ClassIndex();
  if (name === 'empty') return ClassIndex.withNoClasses();
  return loadStaticClasses(join(FIXTURES, 'class-sets', `${name}.yaml`));
}

/** Strings that JSON must escape (or that are on the edge of it): for tests of hand-built JSON text. */
export const AWKWARD_STRINGS: readonly string[] = [
  'say "hi"',
  'back\\slash',
  'line\nbreak\ttab',
  '\u0001control',
  'snäpshot-日本-🙂',
  'del\u007f',
  'x'.repeat(150) + '"',
  '',
];
