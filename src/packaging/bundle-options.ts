import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { BuildOptions } from 'esbuild';

/** @kubernetes/client-node's dist folder, whose modules the bundle's plugins rewrite or resolve. */
export const CLIENT_NODE_DIST = dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node'));

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
