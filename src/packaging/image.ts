import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isMainModule } from './run-as-main.js';

/**
 * `npm run image -- NAME [FOLDER]`: the image index for both platforms, built by podman from the Containerfile in
 * the checkout's folder, and beside it each platform's SBOM, copied out of its image (`/app/sbom.cdx.json`) into
 * FOLDER (dist/image): `sbom-linux-amd64.cdx.json`, `sbom-linux-arm64.cdx.json`. A manifest list of that name is
 * replaced, not added to. $RUNTIME_BASE, when set, is the runtime stage's base (pinned by digest, say). docs/install.md
 * "The image"; test/container/image.mjs builds and runs it this way.
 */
export const PLATFORMS = ['linux/amd64', 'linux/arm64'] as const;

/** Runs podman with `args` and returns what it printed; throws on a non-zero exit. */
export type Podman = (args: readonly string[]) => string;

export interface PlatformImage {
  readonly platform: string;
  /** The digest of that platform's manifest: `NAME@DIGEST` pins it, as the index's own digest pins both. */
  readonly digest: string;
}

/** This machine's platform, as a build stage that runs natively names it. */
export const BUILD_PLATFORM = `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`;

/**
 * Builds `name` as a manifest list of PLATFORMS, one `podman build` per platform, each adding its image to the list;
 * `buildArgs` are more options for `podman build`. BUILDPLATFORM and TARGETPLATFORM are passed as build arguments:
 * podman 4.3 (Debian 12's) sets neither for a FROM line's `--platform=`, and, building several platforms in one
 * run, takes every stage's base for the build stage's platform.
 */
export function buildImageIndex(podman: Podman, name: string, context: string, buildArgs: readonly string[] = []): void {
  try {
    podman(['manifest', 'exists', name]);
    podman(['manifest', 'rm', name]);
  } catch {
    // no list of that name yet
  }
  for (const platform of PLATFORMS) {
    podman([
      'build',
      `--platform=${platform}`,
      `--build-arg=BUILDPLATFORM=${BUILD_PLATFORM}`,
      `--build-arg=TARGETPLATFORM=${platform}`,
      `--manifest=${name}`,
      ...buildArgs,
      '-f',
      join(context, 'Containerfile'),
      context,
    ]);
  }
}

/** Each platform's image in the list `name`, as `podman manifest inspect` says. */
export function platformImages(podman: Podman, name: string): PlatformImage[] {
  const list = JSON.parse(podman(['manifest', 'inspect', name])) as {
    manifests: Array<{ digest: string; platform: { os: string; architecture: string } }>;
  };
  return list.manifests.map((m) => ({ platform: `${m.platform.os}/${m.platform.architecture}`, digest: m.digest }));
}

/** A file of one platform's image, copied out of a container created (never started) from it. */
export function fileOfImage(podman: Podman, name: string, image: PlatformImage, path: string): string {
  const container = podman(['create', `--platform=${image.platform}`, `${name}@${image.digest}`]).trim();
  const work = mkdtempSync(join(tmpdir(), 'image-file-'));
  try {
    podman(['cp', `${container}:${path}`, join(work, 'file')]);
    return readFileSync(join(work, 'file'), 'utf8');
  } finally {
    podman(['rm', container]);
    rmSync(work, { recursive: true, force: true });
  }
}

/** Writes each platform's SBOM into `folder`; returns the files written. */
export function sbomsBeside(podman: Podman, name: string, folder: string): string[] {
  mkdirSync(folder, { recursive: true });
  return platformImages(podman, name).map((image) => {
    const file = join(folder, `sbom-${image.platform.replace('/', '-')}.cdx.json`);
    writeFileSync(file, fileOfImage(podman, name, image, '/app/sbom.cdx.json'));
    return file;
  });
}

if (isMainModule(import.meta)) {
  const [name, folder = 'dist/image'] = process.argv.slice(2);
  if (name === undefined) throw new Error('usage: npm run image -- NAME [FOLDER]');
  const podman: Podman = (args) => execFileSync('podman', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const base = process.env.RUNTIME_BASE;
  buildImageIndex(podman, name, resolve('.'), base === undefined ? [] : [`--build-arg=RUNTIME_BASE=${base}`]);
  for (const image of platformImages(podman, name)) console.log(`${image.platform}\t${name}@${image.digest}`);
  for (const file of sbomsBeside(podman, name, folder)) console.log(`SBOM\t${file}`);
}
