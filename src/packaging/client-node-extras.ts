import type { Metafile, Plugin } from 'esbuild';
import { CLIENT_NODE_DIST, clientNodeModules } from './bundle-options.js';
import { buildFileBesideChunks, requireBesideChunk } from './file-beside-chunks.js';

/**
 * client-node's index loads the packages of features that serving a cluster never uses: exec and attach
 * (`isomorphic-ws`, ws), `cp` (`tar-fs`), SOCKS proxies (`socks-proxy-agent`, `socks`) and the OIDC, Azure and GCP
 * auth providers of a kubeconfig (`openid-client`, `jsonpath-plus`): start time and idle RSS for nothing
 * (docs/benchmarks.md, "Where the memory goes"). In the bundle they
 * are a file of their own beside the chunks (EXTRAS_FILE), required when client-node first uses one of them, so a
 * kubeconfig that needs them still works. Each is used only inside functions; the build stops if client-node takes
 * another name from them.
 */
export const EXTRAS_FILE = 'client-node-extras.cjs';

/** Each package, and what client-node takes from it: `default` (the module itself), or the names it reads. */
const EXTRAS: Readonly<Record<string, readonly string[]>> = {
  'isomorphic-ws': ['default'],
  'tar-fs': ['default'],
  'socks-proxy-agent': ['SocksProxyAgent'],
  socks: ['SocksClient'],
  'openid-client': ['customFetch', 'discovery', 'refreshTokenGrant'],
  'jsonpath-plus': ['JSONPath'],
};

const PACKAGES = Object.keys(EXTRAS).join('|');

/**
 * What client-node's modules take from each package: `default` for a default import, the names of a named import,
 * and for a namespace import (`import * as x`) the names it reads from `x`.
 */
export function namesClientNodeTakes(): Map<string, Set<string>> {
  const taken = new Map(Object.keys(EXTRAS).map((p) => [p, new Set<string>()]));
  const imports = new RegExp(`import\\s+([^;]*?)\\s+from\\s+'(${PACKAGES})'`, 'g');
  for (const { file, text } of clientNodeModules()) {
    for (const [, clause = '', pkg = ''] of text.matchAll(imports)) {
      const names = taken.get(pkg) as Set<string>;
      const namespace = /^\*\s+as\s+(\w+)$/.exec(clause)?.[1];
      if (namespace !== undefined) {
        for (const [, name = ''] of text.matchAll(new RegExp(`\\b${namespace}\\.(\\w+)`, 'g'))) names.add(name);
        // Read other than by name (spread, passed on, indexed): the names it uses cannot be known here.
        if (new RegExp(`(\\.\\.\\.|[(,=]\\s*)${namespace}\\b(?!\\.)|\\b${namespace}\\s*\\[`).test(text))
          names.add(`* as ${namespace}, read whole (${file})`);
      } else if (clause.startsWith('{')) {
        for (const part of clause.slice(1, -1).split(',')) names.add(part.trim().split(/\s+as\s+/)[0] ?? '');
      } else {
        names.add('default');
      }
    }
  }
  return taken;
}

/**
 * The module client-node imports in a package's place, as CommonJS (esbuild reads a CommonJS module's imported
 * names when they are used): it forwards each use to the real package, required from EXTRAS_FILE at the first.
 */
function loadAtFirstUse(pkg: string, names: readonly string[]): string {
  const load = `const real = () => require('extras-file').requireExtras()[${JSON.stringify(pkg)}];`;
  if (names.length === 1 && names[0] === 'default') {
    // The module itself: a class (ws) or an object of functions (tar-fs), constructed, called or read.
    return [
      load,
      'module.exports = new Proxy(function () {}, {',
      '  construct: (_, args) => Reflect.construct(real(), args),',
      '  apply: (_, self, args) => Reflect.apply(real(), self, args),',
      "  get: (_, key) => (key === '__esModule' ? undefined : real()[key]),",
      '});',
    ].join('\n');
  }
  return [
    load,
    ...names.map((n) => `Object.defineProperty(module.exports, '${n}', { enumerable: true, get: () => real().${n} });`),
  ].join('\n');
}

/** For the bundle: each of the packages, imported by client-node, is read from EXTRAS_FILE when first used. */
export const clientNodeExtrasWhenUsed: Plugin = {
  name: 'client-node-extras-when-used',
  setup(b) {
    for (const [pkg, names] of namesClientNodeTakes()) {
      const unknown = [...names].filter((n) => !(EXTRAS[pkg] as readonly string[]).includes(n));
      if (unknown.length > 0)
        throw new Error(`@kubernetes/client-node takes ${unknown.join(', ')} from ${pkg}: add them to EXTRAS`);
    }
    b.onResolve({ filter: new RegExp(`^(${PACKAGES})$`) }, (args) =>
      args.importer.startsWith(CLIENT_NODE_DIST) ? { path: args.path, namespace: 'client-node-extras' } : undefined,
    );
    b.onResolve({ filter: /^extras-file$/, namespace: 'client-node-extras' }, () => ({
      path: 'file',
      namespace: 'client-node-extras-file',
    }));
    b.onLoad({ filter: /.*/, namespace: 'client-node-extras' }, (args) => ({
      contents: loadAtFirstUse(args.path, EXTRAS[args.path] as readonly string[]),
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'client-node-extras-file' }, () => ({
      contents: requireBesideChunk('requireExtras', EXTRAS_FILE),
      loader: 'js',
    }));
  },
};

/** Bundles the packages (EXTRAS) into `dir`/EXTRAS_FILE: each as `require` gives it, by name. */
export async function buildExtrasFile(dir: string): Promise<Metafile> {
  const contents = Object.keys(EXTRAS)
    .map((pkg) => `exports[${JSON.stringify(pkg)}] = require(${JSON.stringify(pkg)});`)
    .join('\n');
  return buildFileBesideChunks(dir, EXTRAS_FILE, contents, CLIENT_NODE_DIST);
}
