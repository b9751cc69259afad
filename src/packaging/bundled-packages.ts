import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';

/** An npm package some of whose files are in the bundle: what the image's SBOM lists (image-sbom.ts). */
export interface BundledPackage {
  readonly name: string;
  readonly version: string;
  /** Its folder, relative to the build's working directory (`node_modules/fastify`). */
  readonly path: string;
}

/** The file the build writes beside the bundle (not in it): the packages the bundle holds code of. */
export const BUNDLED_PACKAGES_FILE = 'bundle-packages.json';

/** `node_modules/a/node_modules/@s/b/lib/x.js` -> `node_modules/a/node_modules/@s/b`: the innermost package folder. */
function packageFolder(input: string): string | undefined {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const [scopeOrName, name] = input.slice(at + 'node_modules/'.length).split('/');
  if (scopeOrName === undefined) return undefined;
  return input.slice(0, at) + `node_modules/${scopeOrName.startsWith('@') ? `${scopeOrName}/${name}` : scopeOrName}`;
}

/** The packages whose files esbuild read into any of `metafiles`, each once, by folder; sorted by name. */
export function bundledPackages(metafiles: readonly Metafile[], root: string): BundledPackage[] {
  const folders = new Set(metafiles.flatMap((m) => Object.keys(m.inputs).flatMap((input) => packageFolder(input) ?? [])));
  return [...folders]
    .map((path) => {
      const { name, version } = JSON.parse(readFileSync(join(root, path, 'package.json'), 'utf8')) as BundledPackage;
      return { name, version, path };
    })
    .sort((a, b) => a.name.localeCompare(b.name) || a.path.localeCompare(b.path));
}
