// `snapshot-webhook explain` against the real apiserver with the real snapshot-controller of the release (v8.4.0 on
// 1.20, v8.6.0 on 1.36) and no webhook registered (so that two defaults for one driver can exist, as on a cluster
// without it): each cause is made for real, and the sidecar's part (the content's status) is played by the test.
// Not made here: `no-controller` (a snapshot a minute old that no controller saw) and `snapshot-error` (the
// controller's own error with no cause before it); test/unit/explain.test.ts covers both.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { missingTool } from '../helpers/tools.mjs';
import { runCli } from '../helpers/cli.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { stopAll, waitFor, type Started } from './processes.js';
import { bindControllerUser, startController } from './snapshot-controller.js';
import { DRIVER, klass, NS, snapshotObjects, VS, VSC, VSCLASS, type Obj } from './snapshot-objects.js';

const missing = missingTool(kube.controllerTool);
if (missing !== undefined) t.plan(0, missing);

interface Explained {
  status: number | null;
  cause?: string;
  message?: string;
  chain?: { step: string; found: string }[];
  error?: string;
}

const dir = missing === undefined ? mkdtempSync(join(tmpdir(), 'sw-e2e-explain-')) : '';
let cluster: TestCluster | undefined;
let controller: Started | undefined;
let objects: ReturnType<typeof snapshotObjects>;
let kc: KubeConfig;
t.teardown(async () => {
  await controller?.stop();
  await cluster?.stop();
  stopAll();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

function explain(name: string, kubeconfig = (cluster as TestCluster).kubeconfig): Explained {
  const r = runCli(['explain', '-n', NS, `volumesnapshot/${name}`, '-o', 'json'], undefined, { KUBECONFIG: kubeconfig });
  return { status: r.status, ...(JSON.parse(r.stdout || '{}') as Omit<Explained, 'status'>) };
}

/** Explains until the cause is `cause` (the controller and the test's sidecar act meanwhile), or 30 s have passed. */
async function explainedAs(name: string, cause: string): Promise<Explained> {
  let last: Explained = { status: null };
  await waitFor(`${name}: ${cause}`, async () => (last = explain(name)).cause === cause, 30_000, 500).catch(() => undefined);
  return last;
}

const snapshot = (name: string, claim: string, className?: string): Obj => ({
  metadata: { name },
  spec: {
    source: { persistentVolumeClaimName: claim },
    ...(className === undefined ? {} : { volumeSnapshotClassName: className }),
  },
});

/** The sidecar's part: the content's status through the status subresource, as csi-snapshotter writes it. */
async function sidecarWrites(contentName: string, status: Record<string, unknown>): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const at = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotcontents' };
  const content = (await api.getClusterCustomObject({ ...at, name: contentName })) as Obj;
  content.status = status;
  await api.replaceClusterCustomObjectStatus({ ...at, name: contentName, body: content });
}

/** The controller's content of a snapshot, once it made it. */
async function contentOf(name: string): Promise<string> {
  let content = '';
  await waitFor(
    `the content of ${name}`,
    async () => {
      const s = await objects.get(VS, name);
      content = (s.status?.boundVolumeSnapshotContentName as string | undefined) ?? '';
      return content !== '' && (await objects.gone(VSC, content)) === false;
    },
    30_000,
    250,
  );
  return content;
}

if (missing === undefined) {
  t.before(async () => {
    cluster = await startCluster(dir);
    kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    objects = snapshotObjects(kc);
    await installCrds(kc, 'controller');
    await objects.core.createNamespace({ body: { metadata: { name: NS } } });
    await bindControllerUser(kc);
    await objects.create(VSCLASS, klass(VSCLASS, 'hostpath', DRIVER, true));
    await objects.create(VSCLASS, klass(VSCLASS, 'twin-a', 'twin.csi.example.com', true));
    await objects.create(VSCLASS, klass(VSCLASS, 'twin-b', 'twin.csi.example.com', true));
    await objects.create(VSCLASS, klass(VSCLASS, 'ebs', 'ebs.csi.aws.com', false));
    await objects.create(VSCLASS, {
      ...klass(VSCLASS, 'with-secret', DRIVER, false),
      parameters: {
        'csi.storage.k8s.io/snapshotter-secret-name': 'snap-creds',
        'csi.storage.k8s.io/snapshotter-secret-namespace': '${volumesnapshot.namespace}',
      },
    });
    for (const [claim, driver] of [
      ['data', DRIVER],
      ['twin', 'twin.csi.example.com'],
      ['orphan', 'orphan.csi.example.com'],
    ] as const)
      await objects.boundClaim(claim, driver);
    // A claim bound to a volume that is not CSI, one still Pending, one whose volume is gone.
    const core = kc.makeApiClient(CoreV1Api);
    await core.createPersistentVolume({
      body: {
        metadata: { name: 'pv-local' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: '/data' },
          claimRef: { namespace: NS, name: 'local' },
        },
      },
    });
    for (const [name, volumeName] of [
      ['local', 'pv-local'],
      ['pending', undefined],
      ['lost', 'pv-lost'],
    ] as const)
      await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: {
          metadata: { name },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
            storageClassName: '',
            ...(volumeName === undefined ? {} : { volumeName }),
          },
        },
      });
    for (const name of ['local', 'lost']) {
      const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: NS, name });
      claim.status = { phase: 'Bound' };
      await core.replaceNamespacedPersistentVolumeClaimStatus({ namespace: NS, name, body: claim });
    }
  });

  t.test('before any controller runs, a new snapshot is in progress', async (t) => {
    await objects.create(VS, snapshot('early', 'data'));
    const e = explain('early');
    t.equal(e.cause, 'in-progress', e.message ?? '');
    t.equal(e.status, 1, 'exit 1: not ready');
    controller = startController(kube.controllerTool, dir, cluster as TestCluster);
  });

  for (const [name, claim, className, cause] of [
    ['no-claim', 'nope', undefined, 'claim-not-found'],
    ['pending-claim', 'pending', undefined, 'claim-not-bound'],
    ['lost-volume', 'lost', undefined, 'volume-not-found'],
    ['not-csi', 'local', undefined, 'volume-not-csi'],
    ['no-class', 'data', 'missing-class', 'class-not-found'],
    ['no-default', 'orphan', undefined, 'no-default-class'],
    ['wrong-driver', 'data', 'ebs', 'class-driver-mismatch'],
    ['no-secret', 'data', 'with-secret', 'secret-not-found'],
  ] as const)
    t.test(`${cause}: made for real, named by explain`, async (t) => {
      await objects.create(VS, snapshot(name, claim, className));
      const e = await explainedAs(name, cause);
      t.equal(e.cause, cause, e.message ?? '');
      t.equal(e.status, 1);
    });

  t.test('two-default-classes: named, with the controller’s own event in the chain', async (t) => {
    await objects.create(VS, snapshot('twin-snap', 'twin'));
    let e: Explained = { status: null };
    await waitFor(
      'the controller’s SetDefaultSnapshotClassFailed event',
      async () => ((e = explain('twin-snap')).chain ?? []).some((l) => l.found.includes('SetDefaultSnapshotClassFailed')),
      30_000,
      500,
    );
    t.equal(e.cause, 'two-default-classes', e.message ?? '');
    t.match(e.message, 'twin-a, twin-b');
  });

  t.test('content-not-found: a pre-provisioned snapshot whose content does not exist', async (t) => {
    await objects.create(VS, {
      metadata: { name: 'imported' },
      spec: { source: { volumeSnapshotContentName: 'no-such-content' } },
    });
    const e = explain('imported');
    t.equal(e.cause, 'content-not-found', e.message ?? '');
  });

  t.test(
    'the early snapshot, once the controller made its content: no sidecar, then the driver’s error, then ready',
    async (t) => {
      const content = await contentOf('early');
      let e = await explainedAs('early', 'no-sidecar');
      t.equal(e.cause, 'no-sidecar', e.message ?? '');
      await sidecarWrites(content, {
        readyToUse: false,
        error: { message: 'rpc error: code = ResourceExhausted desc = quota', time: new Date().toISOString() },
      });
      e = await explainedAs('early', 'driver-error');
      t.equal(e.cause, 'driver-error', e.message ?? '');
      t.match(e.message, 'quota');
      await sidecarWrites(content, {
        readyToUse: true,
        snapshotHandle: 'handle-early',
        creationTime: Date.now() * 1_000_000,
        restoreSize: 1073741824,
      });
      e = await explainedAs('early', 'ready');
      t.equal(e.cause, 'ready', e.message ?? '');
      t.equal(e.status, 0, 'exit 0: ready');
    },
  );

  t.test('the shipped ClusterRole snapshot-webhook-explain is enough; without it the snapshot cannot be read', async (t) => {
    const role = parse(
      readFileSync(fileURLToPath(new URL('../../manifests/base/explain-cluster-role.yaml', import.meta.url)), 'utf8'),
    ) as V1ClusterRole;
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: role });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'explainer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'snapshot-webhook-explain' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'explainer' }],
      },
    });
    const asExplainer = (cluster as TestCluster).kubeconfigFor('explainer');
    let e: Explained = { status: null };
    await waitFor(
      'the binding takes effect',
      async () => (e = explain('early', asExplainer)).cause === 'ready',
      10_000,
      250,
    ).catch(() => undefined);
    t.equal(e.cause, 'ready', e.message ?? e.error ?? '');
    const secret = explain('no-secret', asExplainer);
    t.not(secret.cause, 'secret-not-found', 'without get of secrets it does not claim the secret is missing');
    t.ok(
      (secret.chain ?? []).some((l) => l.step === 'secret' && l.found.includes('not checked')),
      'the chain says the secret was not checked',
    );
    const stranger = explain('early', (cluster as TestCluster).kubeconfigFor('stranger'));
    t.equal(stranger.status, 3, 'exit 3: the snapshot cannot be read');
    t.match(stranger.error, 'forbidden to get VolumeSnapshot');
  });
}
