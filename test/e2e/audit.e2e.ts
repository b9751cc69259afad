// `snapshot-webhook audit` against the real apiserver: objects written with no webhook registered (as on a
// cluster where they predate it), each kind read once at one version it serves, in pages, with RBAC that forbids
// one kind. On 1.36 (upstream's v8.6.0 CRDs, CEL live) a snapshot with two sources cannot be stored, so the object
// that predates the webhook is a content whose reference names no snapshot, which CEL lets through.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { BOUNDS } from '../../src/limits/bounds.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { stopAll } from './processes.js';
import { klass, NS, snapshotObjects, VGSCLASS, VS, VSC, VSCLASS } from './snapshot-objects.js';

const SNAPSHOTS = BOUNDS.pageSize * 2 + 1;
/**
 * The snapshots, none ready (no controller runs here), each a `not-ready` warning: the good ones and, on 1.20, the
 * defect; their claim does not exist.
 */
const NOT_READY = SNAPSHOTS + (kube.celLive ? 0 : 1);
const isNotReady = (line: string): boolean => line.includes(': warning: not ready (');
/** The object that predates the webhook and that it would deny, and the start of its finding. */
const defect = kube.celLive
  ? {
      target: VSC,
      object: {
        metadata: { name: 'unnamed-ref' },
        spec: {
          driver: 'd',
          deletionPolicy: 'Retain',
          source: { snapshotHandle: 'h' },
          volumeSnapshotRef: { name: '', namespace: '' },
        },
      },
      finding: 'snapshot.storage.k8s.io/v1: VolumeSnapshotContent unnamed-ref: both Spec.VolumeSnapshotRef.Name',
    }
  : {
      target: VS,
      object: {
        metadata: { name: 'both-sources' },
        spec: { source: { persistentVolumeClaimName: 'data', volumeSnapshotContentName: 'some-content' } },
      },
      finding: `snapshot.storage.k8s.io/v1: VolumeSnapshot ${NS}/both-sources: only one of`,
    };

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-audit-'));
let cluster: TestCluster | undefined;
t.teardown(async () => {
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

function audit(args: readonly string[], env: NodeJS.ProcessEnv = {}): CliResult {
  return runCli(['audit', ...args], undefined, env, { timeoutMs: 120_000, maxBuffer: 64 * 1024 * 1024 });
}

t.before(async () => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  const objects = snapshotObjects(kc);
  await objects.create(VSCLASS, klass(VSCLASS, 'fast', 'ebs.csi.aws.com', true));
  await objects.create(VSCLASS, klass(VSCLASS, 'slow', 'ebs.csi.aws.com', true));
  await objects.create(VSCLASS, klass(VSCLASS, 'only', 'hostpath.csi.k8s.io', true));
  await objects.create(VGSCLASS, klass(VGSCLASS, 'group-a', 'ebs.csi.aws.com', true));
  await objects.create(defect.target, defect.object);
  await objects.create(VSC, {
    metadata: { name: 'content-ok' },
    spec: {
      driver: 'ebs.csi.aws.com',
      deletionPolicy: 'Delete',
      source: { snapshotHandle: 'snap-1' },
      volumeSnapshotRef: { name: 'x', namespace: NS },
    },
  });
  // More than two pages of good snapshots.
  for (let i = 0; i < SNAPSHOTS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, SNAPSHOTS - i) }, (_, j) =>
        objects.create(VS, { metadata: { name: `good-${i + j}` }, spec: { source: { persistentVolumeClaimName: 'data' } } }),
      ),
    );
  }
});

t.test('audit finds what predates the webhook, each object once, through pages', async (t) => {
  const r = audit([`--kubeconfig=${(cluster as TestCluster).kubeconfig}`]);
  t.equal(r.status, 1, `exit 1: something would be denied\n${r.stderr}`);
  const lines = r.stdout.trimEnd().split('\n');
  t.same(
    lines.filter((l) =>
      l.endsWith(
        'VolumeSnapshotClass fast: default snapshot class: slow already exists for driver: ebs.csi.aws.com; to move the default, first remove it from slow: kubectl annotate volumesnapshotclasses slow snapshot.storage.kubernetes.io/is-default-class-',
      ),
    ),
    [
      'snapshot.storage.k8s.io/v1: VolumeSnapshotClass fast: default snapshot class: slow already exists for driver: ebs.csi.aws.com; to move the default, first remove it from slow: kubectl annotate volumesnapshotclasses slow snapshot.storage.kubernetes.io/is-default-class-',
    ],
    'the double default, once, at v1',
  );
  t.equal(lines.filter((l) => l.startsWith(defect.finding)).length, 1, `${defect.finding} ..., once`);
  t.ok(
    lines.some((l) => l.startsWith('defaults: VolumeSnapshotClass fast, slow: driver ebs.csi.aws.com has 2 default')),
    'one line for the driver with two defaults',
  );
  const notReady = lines.filter(isNotReady);
  t.equal(notReady.length, NOT_READY, 'each snapshot that is not ready, once');
  t.ok(
    notReady.every((l) =>
      /^snapshot\.storage\.k8s\.io\/v1: VolumeSnapshot team-a\/\S+: warning: not ready \(claim-not-found\): PersistentVolumeClaim team-a\/data does not exist/.test(
        l,
      ),
    ),
    `each with explain's cause: ${notReady[0] ?? ''}`,
  );
  t.notOk(
    lines
      .filter((l) => !isNotReady(l))
      .some(
        (l) => l.includes('VolumeSnapshotClass only') || l.includes('good-') || l.includes('group-a') || l.includes('content-ok'),
      ),
    'nothing else is named',
  );
  // 4 classes, the snapshots, the content and the defect, each once; denied: fast, slow, the defect, and once the
  // driver with two defaults.
  const checked = 4 + SNAPSHOTS + 1 + 1;
  t.equal(lines.at(-1), `${checked} checked, 4 denied, ${NOT_READY} warnings, 0 skipped (not snapshot kinds), 0 unreadable`);

  const json = audit(['--output', 'json'], { KUBECONFIG: (cluster as TestCluster).kubeconfig });
  t.equal(json.status, 1, 'KUBECONFIG is honoured');
  const parsed = JSON.parse(json.stdout) as { summary: { checked: number; denied: number } };
  t.match(parsed.summary, { checked, denied: 4 });
});

t.test('a kind the auditor may not list is reported; the others are still checked (exit 2)', async (t) => {
  const c = cluster as TestCluster;
  const kc = new KubeConfig();
  kc.loadFromFile(c.kubeconfig);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'auditor' },
      rules: [
        { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots', 'volumesnapshotclasses'], verbs: ['list'] },
        { apiGroups: ['groupsnapshot.storage.k8s.io'], resources: ['*'], verbs: ['list'] },
        { nonResourceURLs: ['/apis', '/apis/*'], verbs: ['get'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'auditor' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'auditor' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'auditor' }],
    },
  });
  const r = audit([`--kubeconfig=${c.kubeconfigFor('auditor')}`]);
  t.equal(r.status, 2, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  t.ok(
    lines.includes(
      'snapshot.storage.k8s.io/v1: forbidden to list volumesnapshotcontents.v1.snapshot.storage.k8s.io: grant list on volumesnapshotcontents (group snapshot.storage.k8s.io)',
    ),
    'volumesnapshotcontents is named, once',
  );
  t.ok(
    lines.some((l) => l.startsWith('defaults: VolumeSnapshotClass fast, slow')),
    'the classes are still checked',
  );
  // The defect is a content on 1.36: then it is not read.
  const denied = kube.celLive ? 3 : 4;
  // It may list snapshots but not get them: each not-ready line says so, and how to name its cause.
  t.ok(
    lines.filter(isNotReady).every((l) => l.includes('not ready (cannot-read): forbidden to get VolumeSnapshot')),
    'a snapshot it may not read is listed as not ready, with why its cause is not named',
  );
  t.match(
    lines.at(-1),
    new RegExp(`, ${denied} denied, ${NOT_READY} warnings, 0 skipped \\(not snapshot kinds\\), 1 unreadable$`),
  );
});

t.test('the shipped ClusterRole snapshot-webhook-audit is all audit needs: every kind read, nothing unreadable', async (t) => {
  const c = cluster as TestCluster;
  const kc = new KubeConfig();
  kc.loadFromFile(c.kubeconfig);
  const role = parse(
    readFileSync(fileURLToPath(new URL('../../manifests/base/audit-cluster-role.yaml', import.meta.url)), 'utf8'),
  );
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: role as V1ClusterRole });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'shipped-auditor' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'snapshot-webhook-audit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'shipped-auditor' }],
    },
  });
  const r = audit([`--kubeconfig=${c.kubeconfigFor('shipped-auditor')}`]);
  t.equal(r.status, 1, `exit 1: something would be denied, nothing unreadable\n${r.stderr}`);
  t.equal(
    r.stdout.trimEnd().split('\n').at(-1),
    `${4 + SNAPSHOTS + 2} checked, 4 denied, ${NOT_READY} warnings, 0 skipped (not snapshot kinds), 0 unreadable`,
  );
  t.match(
    r.stderr,
    /read volumegroupsnapshotclasses\.groupsnapshot\.storage\.k8s\.io at v\w+: 1 object\n/,
    'the versions read are named',
  );
});

t.test('a cluster that cannot be reached: exit 2 with the reason', async (t) => {
  const c = cluster as TestCluster;
  await c.stopApiserver();
  const r = audit([`--kubeconfig=${c.kubeconfig}`]);
  t.equal(r.status, 2);
  t.match(r.stdout, /cannot read which versions of snapshot\.storage\.k8s\.io the cluster serves/);
});
