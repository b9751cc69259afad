// `npm run bench:capture`: the AdmissionReviews a real kube-apiserver sends, at full size, for the bench's request
// mix (test/bench/mix.mjs). It starts the release E2E_KUBE names (1.20 unless set) with etcd and the real
// snapshot-controller of that release, registers the project's ValidatingWebhookConfiguration as that release
// installs it, pointed at a loopback recorder that allows every request, and writes as users, tools and the controller
// do: classes, snapshots and a pre-provisioned content with `kubectl apply` by an admin; a snapshot applied server-side
// by a GitOps controller and one created by a backup tool, each with its ServiceAccount's token; then the
// controller's own writes (the contents it creates, the class it sets, the references it binds), as its
// ServiceAccount, as it runs in a cluster. Every body the apiserver sent is written, as it arrived, to
// the capture file of that release's mix (or to `--out FILE`), with its metadata, managedFields and kubectl's
// last-applied copy. It then checks that the capture holds every review the mix picks, and prints
// `N passed, N failed` (CI runs it with `--out` on both releases). Every process it starts is stopped by its pid.
// On 1.20 the configuration sends the webhook every write, as upstream's always does: the `every-write` mix,
// test/fixtures/bench/captured-reviews-1.20.json. On 1.36 its matchConditions leave snapshots and classes that are not
// defaults to the CRDs' CEL rules, so the capture holds only contents and default classes: the `matched` mix,
// captured-reviews-1.36.json. It runs in a network namespace of its own where only loopback exists
// (test/helpers/netns.mjs), as the end-to-end suite does.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { devCertPaths, ensureDevCerts } from '../../src/certs/dev-certs.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { freePort, stopAll, waitFor, type Started } from './processes.js';
import { serviceAccountToken } from './service-account-token.js';
import { startController } from './snapshot-controller.js';
import { MIXES, mixEntries } from '../bench/mix.mjs';
import { reexecInNetns } from '../helpers/netns.mjs';
import { missingTool } from '../helpers/tools.mjs';
import { DRIVER, NS, snapshotObjects, VS, VSC } from './snapshot-objects.js';
import { registerWebhook } from './webhook.js';

reexecInNetns((why) => {
  console.log(`capture skipped: ${why}`);
  console.log('capture: 0 passed, 1 failed');
});
// The apiserver of this release and its snapshot-controller may be missing (README "Optional programs"): a skip.
const missing = missingTool(kube.apiserverTool, kube.controllerTool, ...(kube.etcdTool === undefined ? [] : [kube.etcdTool]));
if (missing !== undefined) {
  console.log(`capture skipped: ${missing}`);
  console.log('capture: 0 passed, 0 failed');
  process.exit(0);
}
const { values } = parseArgs({ options: { out: { type: 'string' } } });
/** The mix this release's configuration sends: every write before matchConditions, then only what they pass on. */
const MIX = kube.admissionPolicies ? 'matched' : 'every-write';
const OUT = values.out ?? MIXES[MIX].capture;
/** The classes of test/fixtures/classes/classes.yaml (what the bench serves), so the captured names resolve there. */
const DEFAULT_CLASS = 'csi-hostpath-snapclass';
/**
 * The ServiceAccounts that write: the snapshot-controller as its manifests install it, a GitOps controller (Flux's
 * kustomize-controller applies server-side) and a backup tool (Velero creates its snapshots), each with the RBAC
 * it needs (here cluster-admin: what a review carries is the user, never the role).
 */
const ACCOUNTS = {
  controller: { namespace: 'kube-system', name: 'snapshot-controller' },
  gitops: { namespace: 'flux-system', name: 'kustomize-controller' },
  backup: { namespace: 'velero', name: 'velero' },
} as const;
const username = ({ namespace, name }: { namespace: string; name: string }): string =>
  `system:serviceaccount:${namespace}:${name}`;

interface Review {
  request: {
    uid: string;
    operation: string;
    name?: string;
    kind: { kind: string };
    userInfo: { username?: string };
  };
}

/** Who wrote what, for the capture's listing. */
function described({ request: q }: Review): string {
  return `${q.userInfo.username ?? ''} ${q.operation} ${q.kind.kind} ${q.name ?? ''}`;
}

const dir = mkdtempSync(join(tmpdir(), 'sw-capture-'));
const reviews: Review[] = [];
let cluster: TestCluster | undefined;
let recorder: Server | undefined;
let controller: Started | undefined;
let written = false;

/** A loopback HTTPS server that records each AdmissionReview and allows it. */
async function startRecorder(): Promise<{ port: number; caBundle: string }> {
  const certs = join(dir, 'recorder-certs');
  await ensureDevCerts(certs);
  const paths = devCertPaths(certs);
  const port = await freePort();
  recorder = createServer({ cert: readFileSync(paths.certFile), key: readFileSync(paths.keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review & { apiVersion: string };
      reviews.push(review);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => recorder?.listen(port, '127.0.0.1', resolve));
  return { port, caBundle: readFileSync(paths.caFile).toString('base64') };
}

/**
 * One manifest written by kubectl: `how` is its verb and flags, `apply` (client-side apply, as most users still write)
 * unless given. Asynchronous: the recorder answering the apiserver runs in this process.
 */
function write(kubeconfig: string, manifest: Record<string, unknown>, how: string[] = ['apply']): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', [`--kubeconfig=${kubeconfig}`, ...how, '-f', '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kubectl ${how[0]} exited ${String(code)}`))));
    child.stdin.end(JSON.stringify(manifest));
  });
}
const apply = (kubeconfig: string, manifest: Record<string, unknown>): Promise<void> => write(kubeconfig, manifest);

/**
 * A ServiceAccount bound to cluster-admin, and a kubeconfig with a token the apiserver issued for it (TokenRequest,
 * as the kubelet asks for a pod's projected token): the admin kubeconfig with the token for the user.
 */
async function serviceAccountKubeconfig(
  kc: KubeConfig,
  adminKubeconfig: string,
  account: { namespace: string; name: string },
): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const { namespace, name } = account;
  if (namespace !== 'kube-system') await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: `capture-${namespace}-${name}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const token = await serviceAccountToken(kc, namespace, name);
  const config = JSON.parse(readFileSync(adminKubeconfig, 'utf8')) as { users: { user: Record<string, string> }[] };
  config.users = config.users.map((u) => ({ ...u, user: { token } }));
  const path = join(dir, `kubeconfig-${namespace}-${name}`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** A class of the driver; `isDefault` is the value of its default-class annotation, none when undefined. */
const snapClass = (name: string, isDefault?: 'true' | 'false', labels: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotClass',
  metadata: {
    name,
    labels: { 'app.kubernetes.io/part-of': 'csi-driver-host-path', ...labels },
    ...(isDefault === undefined ? {} : { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': isDefault } }),
  },
  driver: DRIVER,
  deletionPolicy: 'Delete',
});

try {
  cluster = await startCluster(dir);
  const { kubeconfig } = cluster;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const objects = snapshotObjects(kc);
  await installCrds(kc, 'controller');
  await objects.core.createNamespace({ body: { metadata: { name: NS } } });
  const asController = await serviceAccountKubeconfig(kc, kubeconfig, ACCOUNTS.controller);
  const asGitops = await serviceAccountKubeconfig(kc, kubeconfig, ACCOUNTS.gitops);
  const asBackup = await serviceAccountKubeconfig(kc, kubeconfig, ACCOUNTS.backup);
  const { port, caBundle } = await startRecorder();
  await registerWebhook(kc, port, caBundle);
  // The apiserver calls a new webhook once it has loaded the configuration: a probe class changed until it does.
  // Its annotation says it is not a default; that it has one at all is what 1.30+'s matchConditions pass on.
  let attempt = 0;
  await waitFor(
    'the apiserver calls the recorder',
    async () => {
      await apply(kubeconfig, snapClass('capture-probe', 'false', { attempt: String((attempt += 1)) }));
      return reviews.length > 0;
    },
    30_000,
    500,
  );
  reviews.length = 0;
  await apply(kubeconfig, snapClass(DEFAULT_CLASS, 'true'));
  await objects.boundClaim('data', DRIVER, { app: 'postgres' });
  controller = startController(kube.controllerTool, dir, cluster, asController);

  // Classes: a default class updated (a label), and a class that is not a default.
  await apply(kubeconfig, snapClass(DEFAULT_CLASS, 'true', { tier: 'standard' }));
  await apply(kubeconfig, snapClass('csi-hostpath-archive'));
  // Dynamic snapshots of the claim: one naming its class, one left to the default (the controller sets it).
  const snapshot = (
    name: string,
    spec: Record<string, unknown>,
    labels: Record<string, string> = { app: 'postgres', 'backup.example.com/schedule': 'nightly' },
  ): Record<string, unknown> => ({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, namespace: NS, labels },
    spec,
  });
  await apply(
    kubeconfig,
    snapshot('data-nightly', { volumeSnapshotClassName: DEFAULT_CLASS, source: { persistentVolumeClaimName: 'data' } }),
  );
  await apply(kubeconfig, snapshot('data-hourly', { source: { persistentVolumeClaimName: 'data' } }));
  // The same claim's snapshot kept in Git, applied server-side by the GitOps controller (no last-applied copy; the
  // fields it owns in managedFields), and one a backup tool creates (a plain create, as its client library does).
  const fromGit = snapshot('data-weekly', {
    volumeSnapshotClassName: DEFAULT_CLASS,
    source: { persistentVolumeClaimName: 'data' },
  });
  await write(asGitops, fromGit, ['apply', '--server-side', `--field-manager=${ACCOUNTS.gitops.name}`]);
  const backup = snapshot(
    'velero-data-7xk2p',
    { volumeSnapshotClassName: DEFAULT_CLASS, source: { persistentVolumeClaimName: 'data' } },
    { 'velero.io/backup-name': 'nightly-20261127020000', 'velero.io/pvc-name': 'data' },
  );
  await write(asBackup, backup, ['create']);
  // A pre-provisioned content and the snapshot that names it (the controller binds them).
  await apply(kubeconfig, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: { name: 'restored-content' },
    spec: {
      deletionPolicy: 'Retain',
      driver: DRIVER,
      source: { snapshotHandle: '7bdd0de3-aaeb-11e8-9aae-0242ac110002' },
      sourceVolumeMode: 'Filesystem',
      volumeSnapshotClassName: DEFAULT_CLASS,
      volumeSnapshotRef: { name: 'restored', namespace: NS },
    },
  });
  await apply(kubeconfig, snapshot('restored', { source: { volumeSnapshotContentName: 'restored-content' } }));

  const byController = (kind: string, operation: string): number =>
    reviews.filter(
      (r) =>
        r.request.userInfo.username === username(ACCOUNTS.controller) &&
        r.request.kind.kind === kind &&
        r.request.operation === operation,
    ).length;
  await waitFor(
    "the controller's writes",
    async () => {
      const bound = await objects.get(VSC, 'restored-content');
      const hourly = await objects.get(VS, 'data-hourly');
      return (
        (bound.spec?.volumeSnapshotRef as { uid?: string }).uid !== undefined &&
        hourly.spec?.volumeSnapshotClassName !== undefined &&
        byController('VolumeSnapshotContent', 'CREATE') >= 4
      );
    },
    60_000,
    250,
  );
  // The controller's follow-up writes (finalizers, annotations) settle within a few of its retries.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  // Last, a second default for the driver (the recorder allows it; the controller would then find two).
  await apply(kubeconfig, snapClass('second', 'true'));
  writeFileSync(OUT, `${JSON.stringify({ kube: kube.version, controller: kube.controllerTool, reviews }, null, 2)}\n`);
  for (const r of reviews) console.log(`${described(r)}: ${JSON.stringify(r).length} bytes`);
  console.log(`capture: ${reviews.length} reviews written to ${OUT}`);
  written = true;
  let failed = 0;
  try {
    console.log(`capture: every one of the ${MIX} mix's ${mixEntries(MIX, OUT).length} entries found`);
  } catch (error) {
    failed = 1;
    console.log(`capture: ${(error as Error).message}`);
  }
  console.log(`capture: ${1 - failed} passed, ${failed} failed`);
  process.exitCode = failed;
} finally {
  if (!written) for (const r of reviews) console.error(`recorded: ${described(r)}`);
  await controller?.stop();
  recorder?.close();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
}
