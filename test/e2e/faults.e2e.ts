import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { crdFolder, installCrds, readCrds } from './crds.js';
import { stopAll, waitFor } from './processes.js';
import { ask, GROUP_CLASSES, klass, SNAPSHOT_CLASSES } from './direct-review.js';
import { httpsGet, startWebhook, type TestWebhook } from './webhook.js';
import { httpsRequest } from '../helpers/https.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-faults-'));
let cluster: TestCluster;
const started: TestWebhook[] = [];
t.teardown(async () => {
  for (const w of started) await w.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

const client = (kubeconfig: string): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return kc;
};

t.before(async () => {
  cluster = await startCluster(dir);
  const kc = client(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  await waitFor(
    'CRDs served',
    async () => {
      await kc.makeApiClient(CustomObjectsApi).listClusterCustomObject(GROUP_CLASSES);
      return true;
    },
    30_000,
  );
});

t.test('the apiserver stops for 30 s: admissions go on, the cache is reported stale, and resumes within 10 s', async (t) => {
  const hook = await startWebhook(dir, cluster.kubeconfig, ['--discovery-interval=2']);
  started.push(hook);
  const custom = client(cluster.kubeconfig).makeApiClient(CustomObjectsApi);
  await custom.createClusterCustomObject({ ...SNAPSHOT_CLASSES, body: klass(false, 'before', 'outage.csi.example.com') });
  await waitFor(
    'the webhook sees the class',
    async () => !(await ask(hook, false, 'x', 'outage.csi.example.com')).allowed,
    5_000,
  );
  const second = await cluster.startSecondApiserver();
  t.teardown(() => second.stop());

  const stoppedAt = Date.now();
  await cluster.stopApiserver();
  const ca = Buffer.from(hook.caBundle, 'base64');
  await waitFor(
    'the cache reported stale',
    async () =>
      (await httpsGet(hook.port, '/metrics', ca)).body.includes(
        'snapshot_webhook_class_cache_synced{kind="VolumeSnapshotClass"} 0',
      ),
    15_000,
    200,
  );
  t.pass('class_cache_synced is 0 while the watch is broken');
  const review = (
    JSON.parse(readFileSync('test/fixtures/admission/volumesnapshots/v1/create-both-sources.json', 'utf8')) as { review: unknown }
  ).review;
  const snapshot = await httpsRequest(hook.port, { path: '/validate', body: JSON.stringify(review), ca });
  t.match(
    JSON.parse(snapshot.body),
    { response: { allowed: false, status: { message: /^only one of Spec.Source/ } } },
    'admissions that need no cache are answered during the outage',
  );
  t.same(
    await ask(hook, false, 'another', 'outage.csi.example.com'),
    { allowed: false, message: 'default snapshot class: before already exists for driver: outage.csi.example.com' },
    'the last good cache keeps serving',
  );
  t.equal((await httpsGet(hook.port, '/healthz', ca)).body, 'ok', 'alive');

  // A class written through the second apiserver while the first is down.
  await client(second.kubeconfig)
    .makeApiClient(CustomObjectsApi)
    .createClusterCustomObject({ ...SNAPSHOT_CLASSES, body: klass(false, 'during', 'during.csi.example.com') });
  await new Promise((r) => setTimeout(r, Math.max(0, 30_000 - (Date.now() - stoppedAt))));
  await cluster.startApiserver();
  const back = Date.now();
  await waitFor(
    'the class made during the outage is seen',
    async () => (await ask(hook, false, 'rival', 'during.csi.example.com')).message.includes('during already exists'),
    10_000,
    100,
  );
  t.ok(Date.now() - back <= 10_000, `resumed ${Date.now() - back} ms after the apiserver returned`);
  t.match(
    (await httpsGet(hook.port, '/metrics', ca)).body,
    /snapshot_webhook_informer_restarts_total\{kind="VolumeSnapshotClass"\} [1-9]/,
    'restarts counted',
  );
});

t.test('started before the apiserver is reachable: waits, not ready, no crash', async (t) => {
  await cluster.stopApiserver();
  const hook = await startWebhook(dir, cluster.kubeconfig, ['--discovery-interval=2'], false);
  started.push(hook);
  const ca = Buffer.from(hook.caBundle, 'base64');
  await waitFor('the listener', async () => (await httpsGet(hook.port, '/healthz', ca)).status === 200, 10_000);
  await new Promise((r) => setTimeout(r, 2_000));
  const readiness = await httpsGet(hook.port, '/readyz', ca);
  t.equal(readiness.status, 503);
  t.match(readiness.body, "not ready: cannot discover the cluster's API groups yet");
  t.equal(hook.process.child.exitCode, null, 'still running');
  await cluster.startApiserver();
  await waitFor('ready after the apiserver came up', hook.ready, 15_000);
  t.pass('ready once the apiserver answered');
  await hook.process.stop();
});

t.test('RBAC forbids the group kinds: snapshots served, one clear error line', async (t) => {
  const rbac = client(cluster.kubeconfig).makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'snapshot-classes-only' },
      rules: [
        { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshotclasses'], verbs: ['get', 'list', 'watch'] },
        { nonResourceURLs: ['/apis', '/apis/*'], verbs: ['get'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'snapshot-classes-only' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'snapshot-classes-only' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'limited' }],
    },
  });
  const hook = await startWebhook(dir, cluster.kubeconfigFor('limited'), ['--discovery-interval=2']);
  started.push(hook);
  t.same(
    await ask(hook, false, 'rival', 'outage.csi.example.com'),
    { allowed: false, message: 'default snapshot class: before already exists for driver: outage.csi.example.com' },
    'snapshot classes work',
  );
  t.ok(await hook.ready(), 'ready: a kind RBAC forbids never blocks readiness (docs/cluster.md), its decisions deny');
  const group = await ask(hook, true, 'g', 'group.csi.example.com');
  t.same(group, {
    allowed: false,
    message:
      'cannot check whether another default VolumeGroupSnapshotClass exists for driver group.csi.example.com: the webhook may not list volumegroupsnapshotclasses (RBAC); retry shortly',
  });
  await new Promise((r) => setTimeout(r, 3_000));
  const lines = hook.process
    .output()
    .split('\n')
    .filter((l) => l.includes('forbidden to list volumegroupsnapshotclasses'));
  t.equal(lines.length, 1, 'said once, though the watch is retried');
  t.equal(hook.process.child.exitCode, null, 'no crash loop');
  await hook.process.stop();
});

t.test('a CRD deleted and re-created', async (t) => {
  const hook = await startWebhook(dir, cluster.kubeconfig, ['--discovery-interval=1']);
  started.push(hook);
  const kc = client(cluster.kubeconfig);
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const name = 'volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io';
  const crd = readCrds(crdFolder('untyped')).find((c) => c.metadata?.name === name) as V1CustomResourceDefinition;
  await extensions.deleteCustomResourceDefinition({ name });
  await waitFor(
    'the webhook notices',
    async () => (await ask(hook, true, 'g', 'group.csi.example.com')).message.includes('does not serve VolumeGroupSnapshotClass'),
    20_000,
    200,
  ).catch((error: unknown) => {
    const lines = hook.process
      .output()
      .split('\n')
      .filter((l) => !l.includes('"uid"'));
    throw new Error(`${(error as Error).message}\n${lines.join('\n').slice(-3000)}`);
  });
  t.pass('group decisions say the kind is not served');
  await waitFor(
    'the CRD is gone',
    async () => {
      try {
        await extensions.readCustomResourceDefinition({ name });
        return false;
      } catch {
        return true;
      }
    },
    30_000,
    200,
  );
  await extensions.createCustomResourceDefinition({ body: crd });
  const custom = kc.makeApiClient(CustomObjectsApi);
  await waitFor(
    'the CRD is served again',
    async () => {
      await custom.createClusterCustomObject({ ...GROUP_CLASSES, body: klass(true, 'g1', 'group.csi.example.com') });
      return true;
    },
    30_000,
    300,
  );
  await waitFor(
    'watched again',
    async () =>
      (await ask(hook, true, 'g2', 'group.csi.example.com')).message ===
      'default group snapshot class: g1 already exists for driver: group.csi.example.com',
    20_000,
    200,
  );
  t.pass('the re-created kind is watched again');
  t.equal(hook.process.child.exitCode, null);
});

t.test('a frozen apiserver (SIGSTOP): noticed, no second default admitted, not ready after 30 s, back on SIGCONT', async (t) => {
  const hook = await startWebhook(dir, cluster.kubeconfig);
  started.push(hook);
  const ca = Buffer.from(hook.caBundle, 'base64');
  const driver = 'frozen.csi.example.com';
  t.same(await ask(hook, false, 'first', driver), { allowed: true, message: '' }, 'a first default is allowed before');
  const second = await cluster.startSecondApiserver();
  t.teardown(() => second.stop());
  cluster.freezeApiserver();
  t.teardown(() => cluster.thawApiserver());
  const frozenAt = Date.now();
  // Written through the other apiserver: the webhook's watch, on the frozen one, never hears of it.
  await client(second.kubeconfig)
    .makeApiClient(CustomObjectsApi)
    .createClusterCustomObject({ ...SNAPSHOT_CLASSES, body: klass(false, 'made-while-frozen', driver) });
  const answers: { allowed: boolean; message: string }[] = [];
  let stale = '';
  await waitFor(
    'not ready with the stale cache as the reason',
    async () => {
      answers.push(await ask(hook, false, `rival-${answers.length}`, driver));
      const readiness = await httpsGet(hook.port, '/readyz', ca);
      stale = readiness.body;
      return readiness.status === 503 && readiness.body.includes('VolumeSnapshotClass cache is stale');
    },
    60_000,
    1_000,
  );
  t.ok(Date.now() - frozenAt >= 30_000, `not ready ${Math.round((Date.now() - frozenAt) / 1000)} s after the freeze: ${stale}`);
  t.equal(answers.filter((a) => a.allowed).length, 0, `none of ${answers.length} second defaults admitted while frozen`);
  t.ok(
    answers.every((a) => /cannot record|cannot check whether/.test(a.message)),
    `each denied as unable to answer (${answers[0]?.message})`,
  );
  t.match(
    (await httpsGet(hook.port, '/metrics', ca)).body,
    'snapshot_webhook_class_cache_synced{kind="VolumeSnapshotClass"} 0',
    'the cache counts as not synced',
  );
  cluster.thawApiserver();
  await waitFor('ready again after SIGCONT', hook.ready, 30_000, 500);
  t.same(
    await ask(hook, false, 'rival-after', driver),
    { allowed: false, message: `default snapshot class: made-while-frozen already exists for driver: ${driver}` },
    'the class written during the freeze is seen',
  );
  await hook.process.stop();
});
