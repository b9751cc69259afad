import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { BUNDLE_OPTIONS } from './bundle-options.js';

/**
 * A file of the bundle that the chunks require only when they first use it (client-node-undici.ts,
 * client-node-extras.ts): the ES module that requires it from beside the chunk it is bundled into (`import.meta.url`
 * is the chunk's), exporting that as `name`.
 */
export function requireBesideChunk(name: string, file: string): string {
  return [
    "import { createRequire } from 'node:module';",
    `export const ${name} = () => createRequire(import.meta.url)('./${file}');`,
  ].join('\n');
}

/** Bundles CommonJS `contents`, resolved from `resolveDir`, into `dir`/`file`; what it read (esbuild's metafile). */
export async function buildFileBesideChunks(dir: string, file: string, contents: string, resolveDir: string): Promise<Metafile> {
  const { metafile } = await build({
    ...BUNDLE_OPTIONS,
    metafile: true,
    format: 'cjs',
    banner: {},
    stdin: { contents, resolveDir, loader: 'js' },
    outfile: join(dir, file),
  });
  return metafile;
}
