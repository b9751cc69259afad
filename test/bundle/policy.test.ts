import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { reviewAdmission } from '../../src/admission/review.js';
import { parsePolicyOptions, POLICY_FLAGS, policyYaml } from '../../src/cli/policy-command.js';
import { UsageError } from '../../src/config/flags.js';
import { FIXTURES, filesUnder, readJson } from '../helpers/fixtures.js';
import { reviewDeps } from '../helpers/app.js';
import { findUpstreamCrds, missingTool, unpackTool } from '../helpers/tools.mjs';

interface Fixture {
  description: string;
  classes: string;
  review: { request: Record<string, unknown> & { uid: string; resource: { resource: string; version: string } } };
}

const DEFAULT_OPTIONS = parsePolicyOptions(['--group-snapshots']);

t.test('the policy-only overlay ships exactly what `snapshot-webhook policy --group-snapshots` prints', async (t) => {
  t.equal(readFileSync('manifests/overlays/policy-only/policy.yaml', 'utf8'), policyYaml(DEFAULT_OPTIONS));
  const kustomization = readFileSync('manifests/overlays/policy-only/kustomization.yaml', 'utf8');
  t.match(kustomization, /resources:\n\s+- policy\.yaml/);
  t.notMatch(kustomization, /\.\.\/|base/, 'no Deployment, Service or certificates: the base is not included');
  const rendered = execFileSync('kubectl', ['kustomize', 'manifests/overlays/policy-only'], { encoding: 'utf8' });
  t.same(
    parseAllDocuments(rendered).map((d) => (d.toJS() as { kind: string }).kind),
    [
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicyBinding',
    ].sort(),
    'it renders to the two policies and their bindings, nothing else',
  );
});

t.test('flags: API version, group version, name prefix, and clear usage errors', async (t) => {
  const docs = parseAllDocuments(policyYaml(parsePolicyOptions(['--api-version', 'v1beta1', '--name-prefix', 'acme-'])));
  const objects = docs.map((d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string } });
  t.same(
    objects.map((o) => [o.apiVersion, o.kind, o.metadata.name]),
    [
      ['admissionregistration.k8s.io/v1beta1', 'ValidatingAdmissionPolicy', 'acme-one-default-volumesnapshotclass-per-driver'],
      [
        'admissionregistration.k8s.io/v1beta1',
        'ValidatingAdmissionPolicyBinding',
        'acme-one-default-volumesnapshotclass-per-driver',
      ],
    ],
    'one class kind unless --group-snapshots',
  );
  const group = parsePolicyOptions(['--group-snapshots', '--group-version=v1']);
  t.match(policyYaml(group), 'apiVersion: groupsnapshot.storage.k8s.io/v1\n    kind: VolumeGroupSnapshotClass');
  for (const bad of [['--api-version', 'v2'], ['--name-prefix', 'Bad_'], ['extra']]) {
    let error: unknown;
    try {
      parsePolicyOptions(bad);
    } catch (caught) {
      error = caught;
    }
    t.ok(error instanceof UsageError, `${bad.join(' ')}: ${(error as Error | undefined)?.message}`);
  }
});

t.test('docs/cli.md documents every policy flag', async (t) => {
  const docs = readFileSync('docs/cli.md', 'utf8');
  for (const flag of POLICY_FLAGS.filter((f) => f.name !== 'help'))
    t.match(docs, new RegExp(`\\| \`--${flag.name}\` +\\|`), flag.name);
});

/** Fixtures of the default-class rule, as the webhook answers them. */
function classFixtures(): { name: string; fixture: Fixture }[] {
  return ['volumesnapshotclasses', 'volumegroupsnapshotclasses'].flatMap((dir) =>
    filesUnder(join(FIXTURES, 'admission', dir)).map((file) => ({
      name: file.slice(file.indexOf(dir)).replace(/\.json$/, ''),
      fixture: readJson<Fixture>(file),
    })),
  );
}

/** The classes of a fixture's class set, at the params' versions (the CRDs' None conversion only changes apiVersion). */
function paramsFor(set: string): string {
  if (set === 'empty' || set === 'unavailable') return '';
  const text = readFileSync(join(FIXTURES, 'class-sets', `${set}.yaml`), 'utf8');
  return text.replace(
    /^apiVersion: groupsnapshot\.storage\.k8s\.io\/\w+$/gm,
    `apiVersion: groupsnapshot.storage.k8s.io/${DEFAULT_OPTIONS.groupVersion}`,
  );
}

/**
 * Why a fixture is not the apiserver's to decide: a version the current CRDs do not serve, a cache that cannot
 * answer (the policy's cache is the apiserver's own informer), a request without an object.
 */
function notComparedBecause(fixture: Fixture, served: boolean): string | undefined {
  if (!served) return 'a version the current CRDs do not serve';
  if (fixture.classes === 'unavailable')
    return "the webhook's cache cannot answer (503); the policy's cache is the apiserver's own informer";
  return fixture.review.request.object === undefined ? 'no object to check' : undefined;
}

interface VapAnswer {
  name: string;
  allowed: boolean;
  message: string;
  error?: string;
}

/** One fixture: the policy's answer against the webhook's default-class finding. */
async function compare(t: Test, name: string, fixture: Fixture, set: string, answer: VapAnswer | undefined): Promise<void> {
  // The webhook's default-class finding is what the policy must reproduce: its other rules (the group class
  // settings' immutability from v1beta2 on) are the CRDs' CEL, which runs before any policy.
  const outcome = await reviewAdmission(fixture.review, reviewDeps(set));
  const rival = outcome.evaluation.findings.find((f) => f.rule === 'default-class-unique');
  if (rival === undefined) {
    t.same([answer?.allowed, answer?.error], [true, undefined], `${name}: allowed by both`);
  } else if (set === 'double-default') {
    // Two defaults exist: the apiserver evaluates each param and reports one failing one, in no fixed order.
    t.match(
      answer?.message ?? '',
      /denied request: default snapshot class: (fast-[ab]) already exists for driver: ebs\.csi\.aws\.com; to move the default, first remove it from \1: /,
      `${name}: denied by both (either existing default is named)`,
    );
  } else {
    t.ok(
      answer?.allowed === false && answer.message.endsWith(`denied request: ${rival.message}`),
      `${name}: denied by both, with the same message: ${answer?.message}`,
    );
  }
}

// vap-check is built by the user (README "Optional programs"): without it this test skips, naming it.
const vapMissing = missingTool('vap-check');
t.test(
  'the policy decides every default-class fixture as the webhook does, by the apiserver’s own code',
  { skip: vapMissing ?? false },
  async (t) => {
    const crds = findUpstreamCrds();
    if (crds.dir === undefined) {
      t.fail(`vap-check cannot run: ${crds.missing}`);
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'sw-vap-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const vapCheck = unpackTool('vap-check', join(dir, 'vap-check'));
    writeFileSync(join(dir, 'policy.yaml'), policyYaml(DEFAULT_OPTIONS));
    const crdArgs = [
      'snapshot.storage.k8s.io_volumesnapshotclasses.yaml',
      'groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml',
    ].flatMap((f) => ['--crds', join(crds.dir, f)]);
    const served = new Set([
      'volumesnapshotclasses/v1',
      'volumegroupsnapshotclasses/v1beta1',
      'volumegroupsnapshotclasses/v1beta2',
      'volumegroupsnapshotclasses/v1',
    ]);
    const bySet = new Map<string, { name: string; fixture: Fixture }[]>();
    for (const entry of classFixtures()) {
      const { request } = entry.fixture.review;
      const where = `${request.resource.resource}/${request.resource.version}`;
      const reason = notComparedBecause(entry.fixture, served.has(where));
      if (reason !== undefined) {
        t.comment(`not compared: ${entry.name}: ${reason}`);
        continue;
      }
      bySet.set(entry.fixture.classes, [...(bySet.get(entry.fixture.classes) ?? []), entry]);
    }
    let compared = 0;
    for (const [set, entries] of bySet) {
      writeFileSync(join(dir, `${set}.yaml`), paramsFor(set) || 'apiVersion: v1\nkind: List\nitems: []\n');
      const cases = entries.map(({ name, fixture }) => {
        const { operation, resource, kind, object, oldObject } = fixture.review.request;
        return { name, operation, resource, kind, object, ...(oldObject === undefined ? {} : { oldObject }) };
      });
      writeFileSync(join(dir, `${set}.cases.json`), JSON.stringify(cases));
      const output = execFileSync(
        vapCheck,
        [
          '--policy',
          join(dir, 'policy.yaml'),
          '--params',
          join(dir, `${set}.yaml`),
          ...crdArgs,
          '--cases',
          join(dir, `${set}.cases.json`),
        ],
        { encoding: 'utf8' },
      );
      const answers = output
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as VapAnswer);
      for (const { name, fixture } of entries) {
        await compare(
          t,
          name,
          fixture,
          set,
          answers.find((a) => a.name === name),
        );
        compared += 1;
      }
    }
    t.ok(compared >= 40, `${compared} fixtures compared`);
  },
);
