import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from './bundle-options.js';
import { BUNDLED_PACKAGES_FILE, bundledPackages } from './bundled-packages.js';
import { buildExtrasFile, clientNodeExtrasWhenUsed, EXTRAS_FILE } from './client-node-extras.js';
import { buildModelsFile, clientNodeModelsWhenUsed, MODELS_FILE } from './client-node-models.js';
import { buildUndiciFile, undiciAsClientNodeUsesIt, UNDICI_FILE } from './client-node-undici.js';

/**
 * `npm run build`'s last step: bundles the tsc output in dist/ into dist/bundle as ES modules, tree-shaken, with
 * every production dependency inside (the runtime image has no node_modules). Bundled, @kubernetes/client-node
 * takes about half the memory it takes from node_modules (docs/benchmarks.md). Each dynamic import becomes its
 * own chunk, so serving without a cluster never loads client-node, and the CLI never loads fastify. Three parts of
 * client-node that serving a cluster never uses, its model classes, undici and the packages of its other features,
 * are files of their own that are read only if used (client-node-models.ts, client-node-undici.ts,
 * client-node-extras.ts). Beside dist/bundle it writes the list of npm packages the bundle holds code of
 * (bundled-packages.ts), which the image's SBOM lists.
 */
const DIST = resolve('dist');
const OUT = join(DIST, 'bundle');

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
// ES modules, and the project's version for `--version` (src/config/version.ts reads the nearest package.json).
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
writeFileSync(join(OUT, 'package.json'), `${JSON.stringify({ type: 'module', version })}\n`);
const { metafile } = await build({
  ...BUNDLE_OPTIONS,
  metafile: true,
  entryPoints: { main: join(DIST, 'main.js') },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  plugins: [undiciAsClientNodeUsesIt, clientNodeModelsWhenUsed, clientNodeExtrasWhenUsed],
});
// Each is required, when first used, from beside the one chunk that uses it: that chunk must be in chunks/ too.
const metafiles = [
  metafile,
  await buildModelsFile(join(OUT, 'chunks')),
  await buildUndiciFile(join(OUT, 'chunks')),
  await buildExtrasFile(join(OUT, 'chunks')),
];
// Beside the bundle, not in it: the npm packages it holds code of, for the image's SBOM (image-sbom.ts).
writeFileSync(join(DIST, BUNDLED_PACKAGES_FILE), `${JSON.stringify(bundledPackages(metafiles, process.cwd()), null, 2)}\n`);
const outputs = readdirSync(OUT, { recursive: true, encoding: 'utf8' }).filter((f) => /\.c?js$/.test(f));
for (const file of [MODELS_FILE, UNDICI_FILE, EXTRAS_FILE]) {
  const requiring = outputs.filter((f) => readFileSync(join(OUT, f), 'utf8').includes(`./${file}`));
  if (requiring.length !== 1 || dirname(requiring[0] as string) !== 'chunks')
    throw new Error(`${file} must be required from one chunk in chunks/, not from: ${requiring.join(', ')}`);
}
chmodSync(join(OUT, 'main.js'), 0o755);
