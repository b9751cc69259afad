import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { BUNDLE_FILE } from './compiled-bundle.js';

/**
 * `npm run build`'s last step: bundles the tsc output in dist/ into dist/bundle, CommonJS, tree-shaken, with
 * every production dependency inside (the runtime image has no node_modules):
 * - main.js: the entry point; runs snapshot-webhook.js with V8's code cache (loader.ts).
 * - snapshot-webhook.js: the server and the CLI (the code cache applies to it).
 * - cluster.js, certs.js, cli.js: what only some commands need (@kubernetes/client-node, X.509, the YAML
 *   library), loaded by the dynamic imports that name them, so serving without a cluster never reads them.
 * - make-code-cache.js: writes the cache (make-code-cache.ts), run by `npm run build` and the Containerfile.
 * A package.json with "type": "commonjs" makes Node read the folder's .js files as CommonJS.
 */
const DIST = resolve('dist');
const OUT = join(DIST, 'bundle');

/** The files of code only some commands need, each with the modules (in dist) that dynamic imports load. */
const LAZY_FILES: Readonly<Record<string, readonly string[]>> = {
  'cluster.js': ['cluster/cluster-class-source.js', 'cluster/list-classes.js'],
  'certs.js': ['certs/make-certs.js', 'certs/certs-command.js'],
  'cli.js': ['cli/validate-command.js', 'cli/review-command.js'],
};

/** Absolute path of a lazily loaded module in dist → the file in dist/bundle that holds it. */
const LAZY: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(LAZY_FILES).flatMap(([file, modules]) => modules.map((m) => [join(DIST, m), `./${file}`])),
);

/**
 * A dynamic import of a LAZY module becomes a small module inside the bundle that requires the LAZY file at
 * run time (`require`, not `import()`: the loader runs the bundle as a script, which has no import hook).
 */
const lazyFiles: Plugin = {
  name: 'lazy-files',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\./ }, (args) => {
      if (args.kind === 'require-call' && args.namespace === 'lazy-file') return { path: args.path, external: true };
      if (args.kind !== 'dynamic-import') return undefined;
      const file = LAZY[resolve(args.resolveDir, args.path)];
      return file === undefined ? undefined : { path: file, namespace: 'lazy-file' };
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: 'lazy-file' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** Built-in modules that dependencies require at load time but that start-up does not need (see the files). */
const LAZY_BUILTINS: Readonly<Record<string, string>> = {
  assert: resolve('src/packaging/lazy-assert.cjs'),
  http2: resolve('src/packaging/lazy-http2.cjs'),
};

const lazyBuiltins: Plugin = {
  name: 'lazy-builtins',
  setup(pluginBuild) {
    const filter = new RegExp(`^(node:)?(${Object.keys(LAZY_BUILTINS).join('|')})$`);
    pluginBuild.onResolve({ filter }, (args) => {
      const shim = LAZY_BUILTINS[args.path.replace(/^node:/, '')];
      // The shims' own require of the real module stays a require of the built-in.
      if (shim === undefined || args.importer === shim) return undefined;
      return { path: shim };
    });
  },
};

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [lazyFiles, lazyBuiltins],
  // Fastify loads its schema compilers only for route schemas, which this server does not declare (app.ts).
  external: ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
};

/** A bundle made of several modules' exports. */
const reexports = (files: readonly string[]): BuildOptions['stdin'] => ({
  contents: files.map((f) => `export * from ${JSON.stringify(join(DIST, f))};`).join('\n'),
  resolveDir: DIST,
  loader: 'js',
});

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
await Promise.all([
  build({
    ...common,
    entryPoints: [join(DIST, 'packaging/loader.js')],
    outfile: join(OUT, 'main.js'),
    banner: { js: '#!/usr/bin/env node' },
  }),
  build({ ...common, entryPoints: [join(DIST, 'main.js')], outfile: join(OUT, BUNDLE_FILE) }),
  ...Object.entries(LAZY_FILES).map(([file, modules]) =>
    build({ ...common, stdin: reexports(modules), outfile: join(OUT, file) }),
  ),
  build({ ...common, entryPoints: [join(DIST, 'packaging/make-code-cache.js')], outfile: join(OUT, 'make-code-cache.js') }),
]);
chmodSync(join(OUT, 'main.js'), 0o755);
