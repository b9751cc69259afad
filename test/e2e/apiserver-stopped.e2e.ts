// The apiserver stopped: for 30 s while the webhook runs (admissions go on from the last good cache, readiness and
// metrics say the cache is stale, the watch resumes), and before the webhook starts (it waits, not ready, and never
// crashes). faults.e2e.ts has the other faults: a frozen apiserver, RBAC that forbids a kind, a CRD re-created.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { waitFor } from './processes.js';
import { client, faultCluster } from './fault-cluster.js';
import { ask, klass, SNAPSHOT_CLASSES } from './direct-review.js';
import { httpsGet, startWebhook } from './webhook.js';
import { httpsRequest } from '../helpers/https.js';

const suite = faultCluster('apiserver-stopped');

t.test('the apiserver stops for 30 s: admissions go on, the cache is reported stale, and resumes within 10 s', async (t) => {
  const hook = await startWebhook(suite.dir, suite.cluster.kubeconfig, ['--discovery-interval=2']);
  suite.started.push(hook);
  const custom = client(suite.cluster.kubeconfig).makeApiClient(CustomObjectsApi);
  await custom.createClusterCustomObject({ ...SNAPSHOT_CLASSES, body: klass(false, 'before', 'outage.csi.example.com') });
  await waitFor(
    'the webhook sees the class',
    async () => !(await ask(hook, false, 'x', 'outage.csi.example.com')).allowed,
    5_000,
  );
  const second = await suite.cluster.startSecondApiserver();
  t.teardown(() => second.stop());

  const stoppedAt = Date.now();
  await suite.cluster.stopApiserver();
  const ca = Buffer.from(hook.caBundle, 'base64');
  await t.resolves(
    waitFor(
      'the cache reported stale',
      async () =>
        (await httpsGet(hook.port, '/metrics', ca)).body.includes(
          'snapshot_webhook_class_cache_synced{kind="VolumeSnapshotClass"} 0',
        ),
      15_000,
      200,
    ),
    'class_cache_synced is 0 while the watch is broken',
  );
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
    {
      allowed: false,
      message:
        'default snapshot class: before already exists for driver: outage.csi.example.com; to move the default, first remove it from before: kubectl annotate volumesnapshotclasses before snapshot.storage.kubernetes.io/is-default-class-',
    },
    'the last good cache keeps serving',
  );
  t.equal((await httpsGet(hook.port, '/healthz', ca)).body, 'ok', 'alive');

  // A class written through the second apiserver while the first is down.
  await client(second.kubeconfig)
    .makeApiClient(CustomObjectsApi)
    .createClusterCustomObject({ ...SNAPSHOT_CLASSES, body: klass(false, 'during', 'during.csi.example.com') });
  await new Promise((r) => setTimeout(r, Math.max(0, 30_000 - (Date.now() - stoppedAt))));
  await suite.cluster.startApiserver();
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
  await suite.cluster.stopApiserver();
  const hook = await startWebhook(suite.dir, suite.cluster.kubeconfig, ['--discovery-interval=2'], false);
  suite.started.push(hook);
  const ca = Buffer.from(hook.caBundle, 'base64');
  await waitFor('the listener', async () => (await httpsGet(hook.port, '/healthz', ca)).status === 200, 10_000);
  await new Promise((r) => setTimeout(r, 2_000));
  const readiness = await httpsGet(hook.port, '/readyz', ca);
  t.equal(readiness.status, 503);
  t.match(readiness.body, "not ready: cannot discover the cluster's API groups yet");
  t.equal(hook.process.child.exitCode, null, 'still running');
  await suite.cluster.startApiserver();
  await t.resolves(waitFor('ready after the apiserver came up', hook.ready, 15_000), 'ready once the apiserver answered');
  await hook.process.stop();
});
