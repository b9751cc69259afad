// The pod-less policy overlay (manifests/overlays/policy-only), applied as it is with kubectl to a release that has
// ValidatingAdmissionPolicy, with upstream's CRDs: a second default class per driver is denied for each class kind
// with the webhook's message, what the webhook allows for classes is allowed, and concurrent creates of a default
// for one new driver show the race the policy cannot close (the webhook's agreement admits exactly one).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { stopAll, waitFor } from './processes.js';
import { klass, rejection, snapshotObjects, VGSCLASS, VSCLASS, type Obj, type Target } from './snapshot-objects.js';

if (!kube.admissionPolicies) t.plan(0, `Kubernetes ${kube.version} has no ValidatingAdmissionPolicy (GA in 1.30)`);

// Only when the file runs: a file that skips ends at its plan, before any teardown it would register.
const dir = kube.admissionPolicies ? mkdtempSync(join(tmpdir(), 'sw-e2e-policy-')) : '';
let cluster: TestCluster | undefined;
let objects: ReturnType<typeof snapshotObjects>;
t.teardown(async () => {
  await cluster?.stop();
  stopAll();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const KINDS = [
  { target: VSCLASS, words: 'default snapshot class', annotation: 'snapshot.storage.kubernetes.io/is-default-class' },
  { target: VGSCLASS, words: 'default group snapshot class', annotation: 'groupsnapshot.storage.kubernetes.io/is-default-class' },
] as const;

const withAnnotation = (object: Obj, annotation: string, value: string): Obj => ({
  ...object,
  metadata: { ...object.metadata, annotations: { [annotation]: value } },
});

if (kube.admissionPolicies) {
  t.before(async () => {
    cluster = await startCluster(dir);
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    await installCrds(kc, 'current');
    objects = snapshotObjects(kc);
    const applied = spawnSync(
      'kubectl',
      [`--kubeconfig=${cluster.kubeconfig}`, 'apply', '-k', 'manifests/overlays/policy-only'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    if (applied.status !== 0) throw new Error(`kubectl apply -k manifests/overlays/policy-only: ${applied.stderr}`);
  });

  for (const { target, words, annotation } of KINDS) {
    t.test(`${target.kind}: a second default per driver is denied with the webhook's message`, async (t) => {
      const driver = `${target.plural}.csi.example.com`;
      const { create, get, replace, remove } = objects;
      t.equal(await rejection(create(target, klass(target, 'gold', driver, true))), '(admitted)', 'the first default');
      let second = '';
      let attempt = 0;
      // The policy and its params (the classes) reach the apiserver's informers within a moment: until then a second
      // default is admitted, and removed again so that gold stays the only one.
      await waitFor(
        'the policy sees gold',
        async () => {
          const name = `platinum-${(attempt += 1)}`;
          second = await rejection(create(target, klass(target, name, driver, true)));
          if (second === '(admitted)') await remove(target, name);
          return second !== '(admitted)';
        },
        20_000,
        250,
      ).catch(() => undefined);
      t.match(second, `denied request: ${words}: gold already exists for driver: ${driver}`, second);
      // What the webhook allows for classes (docs/rules.md): each is allowed by the policy too.
      t.equal(await rejection(create(target, klass(target, 'silver', driver, false))), '(admitted)', 'a non-default');
      t.equal(
        await rejection(create(target, withAnnotation(klass(target, 'near', driver, false), annotation, 'True'))),
        '(admitted)',
        'a near miss ("True") is not a default',
      );
      t.equal(await rejection(create(target, klass(target, 'other', `other.${driver}`, true))), '(admitted)', 'another driver');
      const gold = await get(target, 'gold');
      t.equal(
        await rejection(replace(target, { ...gold, metadata: { ...gold.metadata, labels: { tier: 'a' } } })),
        '(admitted)',
        'an update of the default that keeps it',
      );
      const silver = await get(target, 'silver');
      const denied = await rejection(replace(target, withAnnotation(silver, annotation, 'true')));
      t.match(denied, `${words}: gold already exists for driver: ${driver}`, 'a non-default made the second default');
      const current = await get(target, 'gold');
      t.equal(
        await rejection(replace(target, { ...current, metadata: { ...current.metadata, annotations: {} } })),
        '(admitted)',
        'removing the annotation',
      );
    });
  }

  t.test('concurrent creates of a default for one new driver: the race the policy leaves open', async (t) => {
    const rounds: number[] = [];
    for (const [round, { target }] of [...KINDS, ...KINDS, ...KINDS, ...KINDS, ...KINDS].entries()) {
      const driver = `race-${round}.csi.example.com`;
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          rejection(objects.create(target as Target, klass(target, `race-${round}-${i}`, driver, true))),
        ),
      );
      const admitted = outcomes.filter((o) => o === '(admitted)').length;
      rounds.push(admitted);
      t.ok(admitted >= 1, `round ${round} (${target.kind}): ${admitted} of 20 admitted`);
      t.ok(
        outcomes.every((o) => o === '(admitted)' || o.includes('already exists for driver: ' + driver)),
        'every denial names a winner',
      );
    }
    // The figure docs/install.md quotes ("Without a pod"): more than one default admitted in most rounds.
    t.comment(`policy race, 20 concurrent creates per round: admitted ${rounds.join(', ')}`);
  });
}
