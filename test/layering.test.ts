import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

/**
 * The folders of src/ from the bottom up: a module imports only from its own folder or from lower ones. Rules
 * know nothing of HTTP, logging or the cluster; the class view knows nothing of the rules; the server and the
 * CLI sit on top and share everything below them.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['limits', 'schemas'],
  ['manifests', 'log'],
  ['classes'],
  ['rules'],
  ['admission', 'policy', 'conversion'],
  ['config'],
  ['cluster'],
  ['certs'],
  ['cli', 'server'],
  ['packaging', '.'],
];
const rank = (folder: string): number => LAYERS.findIndex((layer) => layer.includes(folder));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const SRC = resolve('src');
const folderOf = (file: string): string => relative(SRC, file).split('/')[0]?.replace(/\.ts$/, '') ?? '.';
const topFolder = (file: string): string => (relative(SRC, file).includes('/') ? folderOf(file) : '.');

t.test('no module imports from a folder above its own', async (t) => {
  const upward: string[] = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from |import\()'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), match[1] as string);
      const from = topFolder(file);
      const to = topFolder(target);
      t.not(rank(to), -1, `${relative(SRC, target)} is in a known layer`);
      if (rank(to) > rank(from)) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  t.same(upward, [], 'imports that run upward');
});
