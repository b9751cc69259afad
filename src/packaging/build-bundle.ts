import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * `npm run build`'s last step: bundles the tsc output in dist/ into dist/bundle as ES modules, tree-shaken, with
 * every production dependency inside (the runtime image has no node_modules). Bundled, @kubernetes/client-node
 * takes about half the memory it takes from node_modules (docs/benchmarks.md). Each dynamic import becomes its
 * own chunk, so serving without a cluster never loads client-node, and the CLI never loads fastify.
 */
const DIST = resolve('dist');
const OUT = join(DIST, 'bundle');

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
// ES modules, and the project's version for `--version` (src/config/version.ts reads the nearest package.json).
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
writeFileSync(join(OUT, 'package.json'), `${JSON.stringify({ type: 'module', version })}\n`);
await build({
  entryPoints: { main: join(DIST, 'main.js') },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  // The CommonJS dependencies call `require` for Node's built-in modules; an ES module has none of its own.
  banner: {
    js: "import { createRequire as __snapshotWebhookRequire } from 'node:module'; const require = __snapshotWebhookRequire(import.meta.url);",
  },
  // Fastify loads its schema compilers only for route schemas, which this server does not declare (app.ts).
  external: ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
});
chmodSync(join(OUT, 'main.js'), 0o755);
