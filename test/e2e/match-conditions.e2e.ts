// matchConditions (Kubernetes 1.30+) on the project's ValidatingWebhookConfiguration, with upstream's v8.6.0 CRDs
// (CEL live): admission calls per 1,000 ordinary VolumeSnapshot creates with the base configuration and with the
// component without-match-conditions, and what a webhook outage still blocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AdmissionregistrationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { stopAll, waitFor } from './processes.js';
import { klass, NS, rejection, snapshotObjects, VS, VSC, VSCLASS, type Obj } from './snapshot-objects.js';
import { followDecisions, startWebhook, untilCalled, registerWebhook, type TestWebhook } from './webhook.js';

if (!kube.admissionPolicies) t.plan(0, `Kubernetes ${kube.version} has no webhook matchConditions (GA in 1.30)`);

const CREATES = 1000;
// Only when the file runs: a file that skips ends at its plan, before any teardown it would register.
const dir = kube.admissionPolicies ? mkdtempSync(join(tmpdir(), 'sw-e2e-match-')) : '';
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
let kc: KubeConfig;
t.teardown(async () => {
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** Makes the project's configuration, with these components, the one the apiserver uses. */
async function register(components: readonly string[]): Promise<void> {
  const hooks = kc.makeApiClient(AdmissionregistrationV1Api);
  // Without match conditions the object checks' configuration is gone: remove it from the apiserver too.
  for (const name of ['object-checks.snapshot.storage.k8s.io']) {
    await hooks.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
  }
  await registerWebhook(kc, (webhook as TestWebhook).port, (webhook as TestWebhook).caBundle, components);
}

/** Creates `count` ordinary VolumeSnapshots, 50 at a time. */
async function createSnapshots(prefix: string, count: number): Promise<void> {
  const { create } = snapshotObjects(kc);
  for (let i = 0; i < count; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        create(VS, { metadata: { name: `${prefix}-${i + j}` }, spec: { source: { persistentVolumeClaimName: 'data' } } }),
      ),
    );
}

if (kube.admissionPolicies) {
  t.before(async () => {
    cluster = await startCluster(dir);
    kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    await installCrds(kc, 'current');
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    webhook = await startWebhook(dir, cluster.kubeconfig);
  });

  t.test(`admission calls per ${CREATES} VolumeSnapshot creates, with and without matchConditions`, async (t) => {
    const decisions = followDecisions((webhook as TestWebhook).process, 'e2e-admin');
    // The calls for the snapshots of one batch, by name: the probes of the switch below are not counted.
    const snapshotCalls = (prefix = ''): number =>
      decisions().filter((d) => d.resource.startsWith('volumesnapshots.') && (d.name ?? '').startsWith(prefix)).length;
    await register([]);
    await untilCalled(kc);
    await createSnapshots('with', CREATES);
    const withConditions = snapshotCalls('with-');
    t.equal(withConditions, 0, `with matchConditions (the base): ${withConditions} calls`);

    await register(['without-match-conditions']);
    await waitFor(
      'the configuration without matchConditions in use',
      async () => {
        await createSnapshots(`switch-${Date.now()}`, 1);
        return snapshotCalls() > 0;
      },
      15_000,
      250,
    );
    await createSnapshots('without', CREATES);
    // Decision lines are written after the answer: wait (bounded) for the last ones to be read.
    await waitFor('the decision lines', async () => snapshotCalls('without-') >= CREATES, 5_000).catch(() => undefined);
    const withoutConditions = snapshotCalls('without-');
    t.equal(withoutConditions, CREATES, `without them (without-match-conditions): ${withoutConditions} calls`);
    t.comment(
      `admission calls per ${CREATES} VolumeSnapshot creates: ${withConditions} with matchConditions, ${withoutConditions} without`,
    );
  });

  t.test('a webhook outage with matchConditions: only default-class writes wait', async (t) => {
    await register([]);
    await untilCalled(kc);
    const { create, get, replace } = snapshotObjects(kc);
    await create(VSCLASS, klass(VSCLASS, 'kept', 'kept.csi.example.com', true));
    await create(VSCLASS, klass(VSCLASS, 'promoted', 'promoted.csi.example.com', false));
    await (webhook as TestWebhook).process.stop();
    /** An UPDATE of a class as it is now, changed by `edit`. */
    const update = async (name: string, edit: (c: Obj) => void): Promise<string> => {
      const now = await get(VSCLASS, name);
      edit(now);
      return rejection(replace(VSCLASS, now));
    };
    const ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';
    const outcomes = {
      'label on a default': await update('kept', (c) => (c.metadata.labels = { team: 'storage' })),
      'default made of a plain class': await update('promoted', (c) => (c.metadata.annotations = { [ANNOTATION]: 'true' })),
      'default removed': await update('kept', (c) => delete c.metadata.annotations?.[ANNOTATION]),
      snapshot: await rejection(
        create(VS, { metadata: { name: 'during-outage' }, spec: { source: { persistentVolumeClaimName: 'data' } } }),
      ),
      'non-default class': await rejection(create(VSCLASS, klass(VSCLASS, 'plain', 'outage.csi.example.com', false))),
      'default class': await rejection(create(VSCLASS, klass(VSCLASS, 'first', 'outage.csi.example.com', true))),
      'near-miss class': await rejection(
        create(VSCLASS, {
          ...klass(VSCLASS, 'near-miss', 'outage.csi.example.com', false),
          metadata: { name: 'near-miss', annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'True' } },
        }),
      ),
      content: await rejection(
        create(VSC, {
          metadata: { name: 'during-outage' },
          spec: {
            driver: 'd',
            deletionPolicy: 'Retain',
            source: { snapshotHandle: 'h' },
            volumeSnapshotRef: { name: 's', namespace: NS },
          },
        }),
      ),
    };
    for (const [what, outcome] of Object.entries(outcomes)) t.comment(`during the outage, ${what}: ${outcome}`);
    t.equal(outcomes.snapshot, '(admitted)', 'a VolumeSnapshot is admitted (left to CEL)');
    t.equal(outcomes['non-default class'], '(admitted)', 'a class without the default annotation is admitted');
    t.match(
      outcomes['default class'],
      /failed calling webhook "validation-webhook\.snapshot\.storage\.k8s\.io"/,
      'a default class waits',
    );
    t.equal(
      outcomes['near-miss class'],
      '(admitted)',
      'a class whose annotation is not "true" is admitted (object checks: Ignore)',
    );
    t.equal(outcomes.content, '(admitted)', 'a content is admitted (object checks: Ignore)');
    t.equal(outcomes['label on a default'], '(admitted)', 'an UPDATE that keeps a class the default of its driver is admitted');
    t.match(
      outcomes['default made of a plain class'],
      /failed calling webhook "validation-webhook\.snapshot\.storage\.k8s\.io"/,
      'an UPDATE that makes a default waits',
    );
    t.equal(outcomes['default removed'], '(admitted)', 'removing the default annotation is admitted');
  });
}
