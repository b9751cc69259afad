import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { BuildOptions } from 'esbuild';

/** @kubernetes/client-node's dist folder, whose modules the bundle's plugins rewrite or resolve. */
export const CLIENT_NODE_DIST = dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node'));

let clientNodeSources: ReadonlyArray<{ readonly file: string; readonly text: string }> | undefined;

/** The source of every module in CLIENT_NODE_DIST, with its path there: what the plugins check imports in. Read once. */
export function clientNodeModules(): ReadonlyArray<{ readonly file: string; readonly text: string }> {
  clientNodeSources ??= readdirSync(CLIENT_NODE_DIST, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.js'))
    .map((file) => ({ file, text: readFileSync(join(CLIENT_NODE_DIST, file), 'utf8') }));
  return clientNodeSources;
}

/**
 * How the server is bundled (build-bundle.ts). The bench's libraries floor is bundled the same way
 * (`bundleLibrariesFloor` in test/bench/servers.mjs), so that both start as a bundle does.
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
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
} satisfies BuildOptions;
