import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLED_PACKAGES_FILE, type BundledPackage } from './bundled-packages.js';
import { runtimeNode, type RuntimeNode } from './runtime-node.js';
import { isMainModule } from './run-as-main.js';

/**
 * The SBOM of one platform's image (CycloneDX 1.5, JSON), made in the Containerfile's build stage from what it
 * copies into the image: the npm packages the bundle holds code of, taken from `npm sbom` of the lockfile (their
 * versions, hashes and licenses) and kept only if the bundle holds their code (dist/bundle-packages.json); the
 * pinned Node of that platform (runtime-node.ts); and the base image by its reference, whose own packages are in
 * its own SBOM, not this one.
 */
interface Component {
  readonly 'bom-ref': string;
  readonly type: string;
  readonly name: string;
  readonly version?: string;
  readonly scope?: string;
  readonly purl?: string;
  readonly description?: string;
  readonly properties?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly hashes?: ReadonlyArray<{ readonly alg: string; readonly content: string }>;
  readonly licenses?: unknown;
}

interface Bom {
  readonly metadata: { readonly component: Component; readonly [key: string]: unknown };
  readonly components: readonly Component[];
  readonly dependencies?: ReadonlyArray<{ readonly ref: string; readonly dependsOn?: readonly string[] }>;
  readonly [key: string]: unknown;
}

export interface ImageSbomInputs {
  /** `npm sbom --sbom-format=cyclonedx --package-lock-only`, parsed. */
  readonly npm: Bom;
  readonly bundled: readonly BundledPackage[];
  readonly node: RuntimeNode;
  /** The runtime stage's FROM, as the build was given it. */
  readonly base: string;
  readonly packageJson: { readonly name: string; readonly version: string };
}

/** npm's property marking a devDependency: every bundled package is one, since the image needs no node_modules. */
const DEVELOPMENT = 'cdx:npm:package:development';

/** `pkg:oci/...` for a reference pinned by digest; none for a tag, which names no one image. */
function ociPurl(reference: string): string | undefined {
  const match = /^(?<repository>[^@]+?)(?::[^/:@]+)?@(?<digest>sha256:[0-9a-f]{64})$/.exec(reference);
  if (match?.groups === undefined) return undefined;
  const { repository = '', digest = '' } = match.groups;
  const name = repository.slice(repository.lastIndexOf('/') + 1);
  return `pkg:oci/${name}@${encodeURIComponent(digest)}?repository_url=${encodeURIComponent(repository)}`;
}

/** The SBOM of the image for `inputs.node.platform`. */
export function imageSbom(inputs: ImageSbomInputs): Bom {
  const { npm, bundled, node, base, packageJson } = inputs;
  const wanted = new Set(bundled.map((p) => `${p.name}@${p.version}`));
  const libraries = npm.components
    .filter((c) => wanted.has(`${c.name}@${c.version ?? ''}`))
    .map((c) => ({ ...c, scope: 'required', properties: (c.properties ?? []).filter((p) => p.name !== DEVELOPMENT) }));
  const found = new Set(libraries.map((c) => `${c.name}@${c.version ?? ''}`));
  const lost = [...wanted].filter((p) => !found.has(p));
  if (lost.length > 0) throw new Error(`the bundle holds packages the lockfile does not list: ${lost.join(', ')}`);
  const runtime: Component = {
    'bom-ref': `${node.package}@${node.version}`,
    type: 'application',
    name: node.package,
    version: node.version,
    scope: 'required',
    purl: `pkg:npm/${node.package}@${node.version}`,
    description: `Node.js ${node.version} for ${node.platform}, at /nodejs/bin/node`,
    hashes: [{ alg: 'SHA-512', content: Buffer.from(node.integrity.slice('sha512-'.length), 'base64').toString('hex') }],
  };
  const purl = ociPurl(base);
  const image: Component = {
    'bom-ref': `base:${base}`,
    type: 'container',
    name: base,
    scope: 'required',
    ...(purl === undefined ? {} : { purl }),
    description: 'the base image (glibc, libstdc++, CA certificates, time zones); its own SBOM lists its packages',
  };
  const root: Component = {
    ...npm.metadata.component,
    'bom-ref': `${packageJson.name}@${packageJson.version}`,
    type: 'container',
    name: packageJson.name,
    version: packageJson.version,
    purl: `pkg:npm/${packageJson.name}@${packageJson.version}`,
    properties: [{ name: 'snapshot-webhook:platform', value: node.platform }],
  };
  const components = [image, runtime, ...libraries];
  const refs = new Set(components.map((c) => c['bom-ref']));
  return {
    ...npm,
    metadata: { ...npm.metadata, lifecycles: [{ phase: 'build' }], component: root },
    components,
    dependencies: [
      { ref: root['bom-ref'], dependsOn: components.map((c) => c['bom-ref']) },
      ...(npm.dependencies ?? [])
        .filter((d) => refs.has(d.ref))
        .map((d) => ({ ref: d.ref, dependsOn: (d.dependsOn ?? []).filter((r) => refs.has(r)) })),
    ],
  };
}

// `node dist/packaging/image-sbom.js PLATFORM BASE OUT` (the Containerfile's build stage, in the checkout's folder).
if (isMainModule(import.meta)) {
  const [platform, base, out] = process.argv.slice(2);
  if (platform === undefined || base === undefined || out === undefined)
    throw new Error('usage: image-sbom.js PLATFORM BASE OUT');
  const sbom = execFileSync('npm', ['sbom', '--sbom-format=cyclonedx', '--package-lock-only'], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const bom = imageSbom({
    npm: JSON.parse(sbom) as Bom,
    bundled: JSON.parse(readFileSync(join('dist', BUNDLED_PACKAGES_FILE), 'utf8')) as BundledPackage[],
    node: runtimeNode(platform),
    base,
    packageJson: JSON.parse(readFileSync('package.json', 'utf8')) as ImageSbomInputs['packageJson'],
  });
  writeFileSync(out, `${JSON.stringify(bom, null, 2)}\n`);
}
