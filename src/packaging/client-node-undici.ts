import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Metafile, Plugin } from 'esbuild';
import { CLIENT_NODE_DIST, clientNodeModules } from './bundle-options.js';
import { buildFileBesideChunks, requireBesideChunk } from './file-beside-chunks.js';

/**
 * client-node takes `fetch`, `Agent` and `ProxyAgent` from undici, but undici's index also loads its WebSocket,
 * EventSource, cache, cookie, mock and proxy-variant modules, which nothing here calls: idle RSS for nothing
 * (docs/benchmarks.md, "Where the memory goes"). In the bundle, `undici` is these
 * three, from undici's own files, with the request methods undici's index puts on every dispatcher, in a file of
 * their own beside the chunks (UNDICI_FILE), required when one of the three is first used. Serving a cluster uses
 * none of them (the watches go through node:https, src/cluster/kube-watch.ts), so that file's 680 KB of code are
 * neither read nor held. The build stops if client-node imports any other name from undici.
 */
export const UNDICI_FILE = 'client-node-undici.cjs';

/** What @kubernetes/client-node imports from undici, and where from (undici's own modules). */
const UNDICI_USED: Record<string, string> = {
  fetch: "require('./lib/web/fetch').fetch",
  Agent: "require('./lib/dispatcher/agent')",
  ProxyAgent: "require('./lib/dispatcher/proxy-agent')",
};

const undiciDir = dirname(createRequire(join(CLIENT_NODE_DIST, 'index.js')).resolve('undici'));

/** The names client-node's modules, in every folder, import from 'undici' (`import { a, b as c } from 'undici'`). */
function namesClientNodeImports(): Set<string> {
  const names = new Set<string>();
  for (const { file, text } of clientNodeModules()) {
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
 * For the bundle: client-node's `undici` is a module of getters, one per name, that require UNDICI_FILE from
 * beside the chunk they are in when first read (esbuild reads a CommonJS module's imported names lazily).
 */
export const undiciAsClientNodeUsesIt: Plugin = {
  name: 'undici-as-client-node-uses-it',
  setup(b) {
    const unknown = [...namesClientNodeImports()].filter((n) => !(n in UNDICI_USED));
    if (unknown.length > 0)
      throw new Error(`@kubernetes/client-node imports ${unknown.join(', ')} from undici: add them to UNDICI_USED`);
    b.onResolve({ filter: /^undici$/ }, (args) =>
      args.importer.startsWith(CLIENT_NODE_DIST) ? { path: 'undici', namespace: 'undici-used' } : undefined,
    );
    b.onResolve({ filter: /^undici-file$/, namespace: 'undici-used' }, () => ({ path: 'file', namespace: 'undici-used' }));
    // A CommonJS module of getters; the file's place comes from an ES module, as `import.meta` would make the
    // getters' module an ES module, which has no `module.exports`.
    b.onLoad({ filter: /^undici$/, namespace: 'undici-used' }, () => ({
      contents: [
        "const { requireUndici } = require('undici-file');",
        'let undici;',
        'const used = () => (undici ??= requireUndici());',
        ...Object.keys(UNDICI_USED).map(
          (name) => `Object.defineProperty(module.exports, '${name}', { enumerable: true, get: () => used().${name} });`,
        ),
      ].join('\n'),
      loader: 'js',
    }));
    b.onLoad({ filter: /^file$/, namespace: 'undici-used' }, () => ({
      contents: requireBesideChunk('requireUndici', UNDICI_FILE),
      loader: 'js',
    }));
  },
};

/** Bundles the three (UNDICI_USED) and the dispatchers' request methods into `dir`/UNDICI_FILE. */
export async function buildUndiciFile(dir: string): Promise<Metafile> {
  const contents = [
    "Object.assign(require('./lib/dispatcher/dispatcher').prototype, require('./lib/api'));",
    ...Object.entries(UNDICI_USED).map(([name, from]) => `exports.${name} = ${from};`),
  ].join('\n');
  return buildFileBesideChunks(dir, UNDICI_FILE, contents, undiciDir);
}
