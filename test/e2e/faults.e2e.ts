// Faults of the cluster the webhook reads, short of the apiserver stopping (apiserver-stopped.e2e.ts): an apiserver
// frozen by SIGSTOP, RBAC that forbids the group kinds, and a CRD deleted and re-created.
import t from 'tap';
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { crdFolder, readCrds } from './crds.js';
import { waitFor } from './processes.js';
import { client, faultCluster } from './fault-cluster.js';
import { ask, GROUP_CLASSES, klass, SNAPSHOT_CLASSES } from './direct-review.js';
import { httpsGet, startWebhook } from './webhook.js';

// The default class the RBAC test expects its limited webhook to see.
const suite = faultCluster('faults', async (kc) => {
  await kc
    .makeApiClient(CustomObjectsApi)
    .createClusterCustomObject({ ...SNAPSHOT_CLASSES, body: klass(false, 'before', 'outage.csi.example.com') });
});

t.test('RBAC forbids the group kinds: snapshots served, one clear error line', async (t) => {
  const rbac = client(suite.cluster.kubeconfig).makeApiClient(RbacAuthorizationV1Api);
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
  const hook = await startWebhook(suite.dir, suite.cluster.kubeconfigFor('limited'), ['--discovery-interval=2']);
  suite.started.push(hook);
  t.same(
    await ask(hook, false, 'rival', 'outage.csi.example.com'),
    {
      allowed: false,
      message:
        'default snapshot class: before already exists for driver: outage.csi.example.com; to move the default, first remove it from before: kubectl annotate volumesnapshotclasses before snapshot.storage.kubernetes.io/is-default-class-',
    },
    'snapshot classes work',
  );
  t.ok(await hook.ready(), 'ready: a kind RBAC forbids never blocks readiness (docs/suite.cluster.md), its decisions deny');
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
  const hook = await startWebhook(suite.dir, suite.cluster.kubeconfig, ['--discovery-interval=1']);
  suite.started.push(hook);
  const kc = client(suite.cluster.kubeconfig);
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const name = 'volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io';
  const crd = readCrds(crdFolder('untyped')).find((c) => c.metadata?.name === name) as V1CustomResourceDefinition;
  await extensions.deleteCustomResourceDefinition({ name });
  await t.resolves(
    waitFor(
      'the webhook notices',
      async () =>
        (await ask(hook, true, 'g', 'group.csi.example.com')).message.includes('does not serve VolumeGroupSnapshotClass'),
      20_000,
      200,
    ).catch((error: unknown) => {
      const lines = hook.process
        .output()
        .split('\n')
        .filter((l) => !l.includes('"uid"'));
      throw new Error(`${(error as Error).message}\n${lines.join('\n').slice(-3000)}`);
    }),
    'group decisions say the kind is not served',
  );
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
  await t.resolves(
    waitFor(
      'watched again',
      async () =>
        (await ask(hook, true, 'g2', 'group.csi.example.com')).message ===
        'default group snapshot class: g1 already exists for driver: group.csi.example.com; to move the default, first remove it from g1: kubectl annotate volumegroupsnapshotclasses g1 groupsnapshot.storage.kubernetes.io/is-default-class-',
      20_000,
      200,
    ),
    'the re-created kind is watched again',
  );
  t.equal(hook.process.child.exitCode, null);
});

t.test('a frozen apiserver (SIGSTOP): noticed, no second default admitted, not ready after 30 s, back on SIGCONT', async (t) => {
  const hook = await startWebhook(suite.dir, suite.cluster.kubeconfig);
  suite.started.push(hook);
  const ca = Buffer.from(hook.caBundle, 'base64');
  const driver = 'frozen.csi.example.com';
  t.same(await ask(hook, false, 'first', driver), { allowed: true, message: '' }, 'a first default is allowed before');
  const second = await suite.cluster.startSecondApiserver();
  t.teardown(() => second.stop());
  suite.cluster.freezeApiserver();
  t.teardown(() => suite.cluster.thawApiserver());
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
  suite.cluster.thawApiserver();
  await waitFor('ready again after SIGCONT', hook.ready, 30_000, 500);
  t.same(
    await ask(hook, false, 'rival-after', driver),
    {
      allowed: false,
      message: `default snapshot class: made-while-frozen already exists for driver: ${driver}; to move the default, first remove it from made-while-frozen: kubectl annotate volumesnapshotclasses made-while-frozen snapshot.storage.kubernetes.io/is-default-class-`,
    },
    'the class written during the freeze is seen',
  );
  await hook.process.stop();
});
