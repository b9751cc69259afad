// What the image is built from: the pinned Node of each platform (runtime-node.ts), the npm packages the bundle
// holds code of (bundled-packages.ts) and the SBOM made of both (image-sbom.ts), table-driven over
// test/fixtures/sbom/. test/container/image.mjs builds the images and checks their SBOMs against them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { bundledPackages } from '../../src/packaging/bundled-packages.js';
import { PLATFORMS } from '../../src/packaging/image.js';
import { imageSbom, type ImageSbomInputs } from '../../src/packaging/image-sbom.js';
import { runtimeNode } from '../../src/packaging/runtime-node.js';
import { FIXTURES } from '../helpers/fixtures.js';

const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  name: string;
  version: string;
  devDependencies: { node: string };
  runtimeNode: Record<string, unknown>;
};

t.test('package.json pins a Node for each platform of the index, at the version the tests run on', async (t) => {
  t.same(Object.keys(packageJson.runtimeNode).sort(), [...PLATFORMS].sort());
  for (const platform of PLATFORMS) {
    const node = runtimeNode(platform);
    t.equal(node.version, packageJson.devDependencies.node, platform);
    t.match(node.package, /^node-linux-(x64|arm64)$/, platform);
    t.match(node.integrity, /^sha512-[A-Za-z0-9+/]{86}==$/, platform);
  }
  t.throws(
    () => runtimeNode('linux/s390x'),
    /no Node is pinned for linux\/s390x: package.json's runtimeNode has linux\/amd64, linux\/arm64/,
  );
});

t.test('the bundled packages are the innermost package folders of what esbuild read, each once', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'bundled-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const folders = { 'node_modules/a': 'a@1.0.0', 'node_modules/@s/b': '@s/b@2.0.0', 'node_modules/a/node_modules/c': 'c@3.0.0' };
  for (const [folder, spec] of Object.entries(folders)) {
    mkdirSync(join(root, folder), { recursive: true });
    const at = spec.lastIndexOf('@');
    writeFileSync(join(root, folder, 'package.json'), JSON.stringify({ name: spec.slice(0, at), version: spec.slice(at + 1) }));
  }
  const inputs = (...files: string[]) => ({
    inputs: Object.fromEntries(files.map((f) => [f, { bytes: 1, imports: [] }])),
    outputs: {},
  });
  const found = bundledPackages(
    [
      inputs('dist/main.js', 'node_modules/a/index.js', 'node_modules/a/lib/x.js', 'node_modules/@s/b/dist/esm/y.js'),
      inputs('node_modules/a/node_modules/c/z.js', 'node_modules/@s/b/dist/esm/y.js'),
    ],
    root,
  );
  t.same(
    found.map((p) => `${p.name}@${p.version} ${p.path}`),
    ['@s/b@2.0.0 node_modules/@s/b', 'a@1.0.0 node_modules/a', 'c@3.0.0 node_modules/a/node_modules/c'],
  );
});

interface Case {
  readonly name: string;
  readonly bundled: readonly string[];
  readonly platform: string;
  readonly base: string;
  readonly components?: readonly string[];
  readonly dependencies?: Readonly<Record<string, readonly string[]>>;
  readonly basePurl?: string;
  readonly error?: string;
}

const npm = JSON.parse(readFileSync(`${FIXTURES}sbom/npm-sbom.json`, 'utf8')) as ImageSbomInputs['npm'];
const cases = parse(readFileSync(`${FIXTURES}sbom/cases.yaml`, 'utf8')) as Case[];
for (const c of cases)
  t.test(c.name, async (t) => {
    const bundled = c.bundled.map((spec) => {
      const at = spec.lastIndexOf('@');
      return { name: spec.slice(0, at), version: spec.slice(at + 1), path: `node_modules/${spec.slice(0, at)}` };
    });
    const inputs = { npm, bundled, node: runtimeNode(c.platform), base: c.base, packageJson };
    if (c.error !== undefined) {
      t.throws(() => imageSbom(inputs), { message: c.error });
      return;
    }
    const bom = imageSbom(inputs);
    const refs = bom.components.map((x) => x['bom-ref']);
    t.same(refs, c.components, 'the components');
    t.equal(bom.metadata.component.name, 'snapshot-webhook');
    t.same(bom.metadata.component.properties, [{ name: 'snapshot-webhook:platform', value: c.platform }]);
    for (const x of bom.components) {
      t.equal(x.scope, 'required', `${x['bom-ref']} is required`);
      t.notOk(
        x.properties?.some((p) => p.name === 'cdx:npm:package:development'),
        `${x['bom-ref']} is not marked a devDependency`,
      );
    }
    const node = bom.components[1];
    t.equal(
      `sha512-${Buffer.from(node?.hashes?.[0]?.content ?? '', 'hex').toString('base64')}`,
      runtimeNode(c.platform).integrity,
      "the Node's hash is the pinned integrity",
    );
    t.equal(bom.components[0]?.purl, c.basePurl, 'the base image purl');
    const dependencies = Object.fromEntries((bom.dependencies ?? []).map((d) => [d.ref, d.dependsOn]));
    t.same(dependencies[`${packageJson.name}@${packageJson.version}`], refs, 'the image depends on each component');
    for (const [ref, on] of Object.entries(c.dependencies ?? {})) t.same(dependencies[ref], on, `${ref} depends on`);
  });
