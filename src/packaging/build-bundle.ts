import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { BUNDLE_OPTIONS } from './bundle-options.js';

/**
 * `npm run build`'s last step: bundles the tsc output in dist/ into dist/bundle as ES modules, tree-shaken, with
 * every production dependency inside (the runtime image has no node_modules). Bundled, @kubernetes/client-node
 * takes about half the memory it takes from node_modules (docs/benchmarks.md). Each dynamic import becomes its
 * own chunk, so serving without a cluster never loads client-node, and the CLI never loads fastify.
 */
const DIST = resolve('dist');
const OUT = join(DIST, 'bundle');

/** What @kubernetes/client-node imports from undici, and where from (undici's own modules). */
const UNDICI_USED: Record<string, string> = {
  fetch: "require('./lib/web/fetch').fetch",
  Agent: "require('./lib/dispatcher/agent')",
  ProxyAgent: "require('./lib/dispatcher/proxy-agent')",
};

/** The names client-node's modules, in every folder, import from 'undici' (`import { a, b as c } from 'undici'`). */
function namesClientNodeImports(clientNodeDist: string): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(clientNodeDist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(clientNodeDist, file), 'utf8');
    for (const [, list = ''] of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'undici'/g))
      for (const part of list.split(',')) {
        const name = part.trim().split(/\s+as\s+/)[0] ?? '';
        if (name !== '') names.add(name);
      }
    if (/import\s+\*\s+as\s+\w+\s+from\s+'undici'|require\('undici'\)|import\('undici'\)/.test(text)) names.add(`* (${file})`);
  }
  return names;
}

/**
 * client-node takes `fetch`, `Agent` and `ProxyAgent` from undici, but undici's index also loads its WebSocket,
 * EventSource, cache, cookie, mock and proxy-variant modules, which nothing here calls: 3.5 MB of idle RSS in
 * cluster mode (87.1 against 90.6 MB, medians of 5 runs) and a sixth of the cluster chunk (docs/benchmarks.md).
 * For client-node's imports, `undici` is these three, required from undici's own files when first used, with the
 * request methods undici's index puts on every dispatcher. The build stops if client-node imports any other name
 * from undici.
 */
const undiciAsClientNodeUsesIt: Plugin = {
  name: 'undici-as-client-node-uses-it',
  setup(b) {
    const clientNode = dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node'));
    const unknown = [...namesClientNodeImports(clientNode)].filter((n) => !(n in UNDICI_USED));
    if (unknown.length > 0)
      throw new Error(`@kubernetes/client-node imports ${unknown.join(', ')} from undici: add them to UNDICI_USED`);
    const undiciDir = dirname(createRequire(join(clientNode, 'index.js')).resolve('undici'));
    b.onResolve({ filter: /^undici$/ }, (args) =>
      args.importer.startsWith(clientNode) ? { path: 'undici', namespace: 'undici-used' } : undefined,
    );
    // Each name is a getter, so undici's modules are evaluated only if one is used: serving a cluster uses none
    // (the watches go through node:https, src/cluster/kube-watch.ts), and esbuild reads imported names lazily.
    b.onLoad({ filter: /.*/, namespace: 'undici-used' }, () => ({
      contents: [
        'let methods = false;',
        'const used = (get) => {',
        "  if (!methods) Object.assign(require('./lib/dispatcher/dispatcher').prototype, require('./lib/api'));",
        '  methods = true;',
        '  return get();',
        '};',
        ...Object.entries(UNDICI_USED).map(
          ([name, from]) =>
            `Object.defineProperty(module.exports, '${name}', { enumerable: true, get: () => used(() => ${from}) });`,
        ),
      ].join('\n'),
      resolveDir: undiciDir,
      loader: 'js',
    }));
  },
};

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
// ES modules, and the project's version for `--version` (src/config/version.ts reads the nearest package.json).
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
writeFileSync(join(OUT, 'package.json'), `${JSON.stringify({ type: 'module', version })}\n`);
await build({
  ...BUNDLE_OPTIONS,
  entryPoints: { main: join(DIST, 'main.js') },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  plugins: [undiciAsClientNodeUsesIt],
});
chmodSync(join(OUT, 'main.js'), 0o755);
