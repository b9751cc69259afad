import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { BUNDLE_OPTIONS, CLIENT_NODE_DIST } from './bundle-options.js';

/**
 * @kubernetes/client-node's generated `ObjectSerializer` imports all of its ~760 model classes, and its `typeMap`
 * names each one. `ListWatch` imports the serializer (for label and field selectors), so every model class, with
 * its attribute table, was evaluated when cluster mode started, and their 430 KB of code sat in the cluster chunk:
 * idle RSS for classes this server never uses (docs/benchmarks.md, "Where the memory goes").
 *
 * In the bundle the model classes are a file of their own, MODELS_FILE beside the chunks, which the serializer
 * requires when its `typeMap` is first read; what it does with them is unchanged. The build stops if the
 * serializer is not the shape this expects (imports of models, and a `typeMap` that names exactly those), and
 * esbuild stops it if any module kept in the bundle imports a model class through the serializer.
 */
export const MODELS_FILE = 'client-node-models.js';

const models = join(CLIENT_NODE_DIST, 'gen', 'models');
/** client-node's generated serializer, which modelsWhenUsed rewrites. */
export const serializer = join(models, 'ObjectSerializer.js');

/** The serializer's source, rewritten to require the model classes from MODELS_FILE when first used. */
export function modelsWhenUsed(source: string): string {
  const lines = source.split('\n');
  const imported = new Set<string>();
  const kept: string[] = [];
  let typeMapAt = -1;
  let typeMapEnd = -1;
  for (const [i, line] of lines.entries()) {
    if (typeMapAt >= 0 && typeMapEnd < 0) {
      if (line === '};') typeMapEnd = i;
      continue;
    }
    if (/^export \* from '\.\.\/models\/\w+\.js';$/.test(line)) continue;
    const model = /^import \{ (\w+) \} from '\.\.\/models\/(\w+)\.js';$/.exec(line);
    if (model !== null && model[1] === model[2]) {
      imported.add(model[1] as string);
      continue;
    }
    if (/^(import|export)\b(?! class ObjectSerializer\b)/.test(line)) throw new Error(`ObjectSerializer.js: unexpected: ${line}`);
    if (line === 'let typeMap = {') {
      typeMapAt = i;
      kept.push('let typeMap = new Proxy({}, { get: (_, name) => modelClasses()[name] });');
      continue;
    }
    kept.push(line);
  }
  if (typeMapAt < 0 || typeMapEnd < 0) throw new Error('ObjectSerializer.js: no `let typeMap = { ... };`');
  // The Proxy answers reading a name only: `name in typeMap` or `Object.keys(typeMap)` would find nothing.
  const other = kept.find((line) => /\btypeMap\b(?!\[)/.test(line) && !line.startsWith('let typeMap = new Proxy'));
  if (other !== undefined) throw new Error(`ObjectSerializer.js: typeMap used other than by name: ${other.trim()}`);
  const named = lines.slice(typeMapAt + 1, typeMapEnd).map((line) => /^ {4}"(\w+)": (\w+),$/.exec(line));
  if (named.length !== imported.size || named.some((m) => m === null || m[1] !== m[2] || !imported.has(m[1] as string)))
    throw new Error('ObjectSerializer.js: typeMap does not name exactly the imported models');
  return [
    "import { createRequire as modelsRequire } from 'node:module';",
    ...kept,
    'let loadedModelClasses;',
    `const modelClasses = () => (loadedModelClasses ??= modelsRequire(import.meta.url)('./${MODELS_FILE}'));`,
    '',
  ].join('\n');
}

/**
 * For the bundle: the serializer rewritten by modelsWhenUsed, and the model modules marked as free of side
 * effects (each only defines its class), so that gen/models/all.js, which client-node's index re-exports, no
 * longer brings them in.
 */
export const clientNodeModelsWhenUsed: Plugin = {
  name: 'client-node-models-when-used',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/(models\/)?\w+\.js$/ }, (args) => {
      const path = resolve(args.resolveDir, args.path);
      return dirname(path) === models && path !== serializer ? { path, sideEffects: false } : undefined;
    });
    b.onLoad({ filter: /[\\/]gen[\\/]models[\\/]ObjectSerializer\.js$/ }, (args) =>
      args.path === serializer
        ? { contents: modelsWhenUsed(readFileSync(serializer, 'utf8')), loader: 'js', resolveDir: models }
        : undefined,
    );
  },
};

/** Bundles every model class (client-node's gen/models/all.js) into `dir`/MODELS_FILE. */
export async function buildModelsFile(dir: string): Promise<Metafile> {
  const { metafile } = await build({
    ...BUNDLE_OPTIONS,
    metafile: true,
    stdin: { contents: "export * from './all.js';", resolveDir: models, loader: 'js' },
    outfile: join(dir, MODELS_FILE),
  });
  return metafile;
}
