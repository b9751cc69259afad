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
  ['admission', 'policy', 'conversion', 'explain'],
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

/**
 * The three kinds of test, by folder: test/unit runs no subprocess and opens no socket; test/server runs the
 * server in process (fastify inject, loopback sockets) and no subprocess; test/bundle may spawn (the built file,
 * kubectl, npm). What a file imports says what it can do.
 */
t.test('unit tests open nothing, server tests spawn nothing', async (t) => {
  const SPAWNS = /from '(node:child_process|\.\.\/helpers\/(cli|built-server)\.js)'/;
  const SOCKETS =
    /from '(node:https?|node:net|node:tls|fastify|\.\.\/helpers\/(app|loopback|https)\.js|\.\.\/\.\.\/src\/server\/(app|serve|run)\.js)'/;
  const offending = (folder: string, pattern: RegExp): string[] =>
    readdirSync(`test/${folder}`)
      .filter((name) => name.endsWith('.test.ts') && pattern.test(readFileSync(`test/${folder}/${name}`, 'utf8')))
      .map((name) => `test/${folder}/${name}`);
  t.same(offending('unit', SPAWNS), [], 'unit tests that can spawn');
  t.same(offending('unit', SOCKETS), [], 'unit tests that can listen or connect');
  t.same(offending('server', SPAWNS), [], 'server tests that can spawn');
  t.ok(readdirSync('test/bundle').length > 0 && readdirSync('test/server').length > 0, 'every folder has tests');
});
