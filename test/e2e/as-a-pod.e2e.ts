// The webhook as its Deployment runs it (as-a-pod.ts, shipped-container.ts): the image's files as the Containerfile
// lays them out, the Deployment's arguments, environment and secret volume, its user and group with every
// capability dropped and no privilege escalation, a read-only root filesystem, the shipped ServiceAccount and RBAC
// with the token the apiserver issued for that account at the kubelet's path, and the in-cluster environment; no
// kubeconfig. Every other suite hands the server a kubeconfig; a pod has none.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { devCertPaths, ensureDevCerts } from '../../src/certs/dev-certs.js';
import { CLASS_KIND_FACTS } from '../../src/classes/class-kinds.js';
import { CLAIMS_ANNOTATION, readClaims } from '../../src/classes/default-claims.js';
import { deploymentSecretMounts, deploymentSecurity, memoryLimitMb, type DeploymentSecurity } from '../helpers/deployment.mjs';
import {
  podCommand,
  podIdentity,
  renderedPod,
  SERVICE_ACCOUNT_DIR,
  type PodContainer,
  type PodIdentity,
  type PodStart,
} from './as-a-pod.js';
import { restrictedV2, SUPPLEMENTAL_GROUPS, UID_RANGE } from './openshift-scc.js';
import { shippedContainer } from './shipped-container.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, untilServedFromCache } from './crds.js';
import { freePort, startProcess, stopAll, waitWhileRunning, type Started } from './processes.js';
import { klass, rejection, snapshotObjects, VSCLASS } from './snapshot-objects.js';
import { httpsGet, untilCalled, registerWebhook } from './webhook.js';

const DRIVER = 'pod.csi.example.com';

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-pod-'));
let cluster: TestCluster | undefined;
/** Each pod started, and how: the base's first, then OpenShift's. */
const pods: { pod: Started; start: PodStart }[] = [];
t.teardown(async () => {
  for (const { pod, start } of pods) {
    await pod.stop();
    start.cgroup.remove();
  }
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

let kc: KubeConfig;
let identity: PodIdentity;
let port: number;
let container: PodContainer;
let ca: Buffer;

/** Starts the container as a pod with these security settings, as `name`, and waits until it is ready. */
async function startPod(security: DeploymentSecurity, name: string): Promise<{ pod: Started; start: PodStart }> {
  const named = { ...identity, env: { ...identity.env, POD_NAME: name, HOSTNAME: name } };
  const start = podCommand(named, container, dir, security);
  const pod = startProcess(start.command, start.args);
  pods.push({ pod, start });
  const ready = async (): Promise<boolean> => (await httpsGet(port, '/readyz', ca)).status === 200;
  await waitWhileRunning(pod, `${name} /readyz`, ready, 30_000).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${pod.output().slice(-3000)}`);
  });
  return { pod, start };
}

t.before(async () => {
  cluster = await startCluster(dir);
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  await untilServedFromCache(kc, 'untyped');
  identity = await podIdentity(cluster, dir);
  const certDir = join(dir, 'webhook-certs');
  await ensureDevCerts(certDir);
  ca = readFileSync(devCertPaths(certDir).caFile);
  port = await freePort();
  container = shippedContainer(certDir, port);
  await startPod(deploymentSecurity(), identity.env.POD_NAME as string);
  await registerWebhook(kc, port, ca.toString('base64'));
  await untilCalled(kc, 'webhook registered');
});

/** /proc/PID/status as field and value. */
function procStatus(pid: number): Record<string, string | undefined> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .map((l) => l.split(':\t') as [string, string]),
  );
}

/** The first pod and how it was started. */
const base = (): { pod: Started; start: PodStart } => pods[0] as { pod: Started; start: PodStart };

/** A pod's log lines, parsed. */
function logLines(pod: Started): { level: number; msg: string }[] {
  return pod
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

t.test('with the shipped RBAC and its own token, every readiness check passes', async (t) => {
  const verbose = await httpsGet(port, '/readyz?verbose', ca);
  t.equal(verbose.status, 200);
  t.notMatch(verbose.body, /^\[-\]/m, `no check failed or is shown as a problem:\n${verbose.body}`);
  t.match(verbose.body, /^\[\+\]permissions ok$/m, 'the permission review passed');
  t.match(verbose.body, /^readyz check passed$/m);
});

t.test('it runs as the Deployment says: its user, no capabilities, a read-only root and volumes', async (t) => {
  const pid = base().pod.child.pid as number;
  const security = deploymentSecurity();
  t.same(
    [
      security.runAsUser,
      security.runAsGroup,
      security.readOnlyRoot,
      security.noNewPrivileges,
      security.dropAllCapabilities,
      security.seccompProfile,
    ],
    [65532, 65532, true, true, true, 'RuntimeDefault'],
    'manifests/base/deployment.yaml: user and group 65532, a read-only root, no escalation, every capability ' +
      'dropped, the runtime default seccomp profile',
  );
  const status = procStatus(pid);
  t.equal(status.Uid, '65532\t65532\t65532\t65532', "every uid is the Deployment's runAsUser");
  t.equal(status.Gid, '65532\t65532\t65532\t65532', 'every gid is its runAsGroup');
  t.equal(status.Groups?.trim(), '65532', 'its one supplementary group is its gid, which CRI-O adds');
  for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) t.equal(status[set], '0000000000000000', `${set} empty`);
  t.equal(status.NoNewPrivs, '1', 'no privilege escalation');
  t.equal(status.Seccomp, '2', 'a seccomp filter is on (mode 2, filter)');
  t.equal(status.Seccomp_filters, '1', 'one filter: the RuntimeDefault profile');
  const mounts = readFileSync(`/proc/${pid}/mounts`, 'utf8').split('\n');
  const options = (path: string): string | undefined => mounts.find((l) => l.split(' ')[1] === path)?.split(' ')[3];
  t.match(options('/'), /^ro,/, 'its / is read-only');
  t.match(options(SERVICE_ACCOUNT_DIR), /^ro,/, 'the token is mounted read-only');
  for (const { mountPath } of deploymentSecretMounts()) t.match(options(mountPath), /^ro,/, `${mountPath} is read-only`);
  for (const path of Object.keys(container.files)) t.match(options(path), /^ro,/, `the image's ${path}, read-only`);
  const { cgroup } = base().start;
  t.equal(cgroup.limitBytes(), memoryLimitMb() * 2 ** 20, "its memory cgroup has the Deployment's memory limit");
  t.match(readFileSync(`/proc/${pid}/cgroup`, 'utf8'), cgroup.dir.split('/').at(-1) as string, 'and it is in that cgroup');
});

t.test('a second default class for a driver is denied through the apiserver; the claim is in the Lease', async (t) => {
  const objects = snapshotObjects(kc);
  t.equal(await rejection(objects.create(VSCLASS, klass(VSCLASS, 'pod-first', DRIVER, true))), '(admitted)');
  const second = await rejection(objects.create(VSCLASS, klass(VSCLASS, 'pod-second', DRIVER, true)));
  t.match(second, /already exists for driver|was just admitted for driver|was claimed for driver/);
  t.match(second, /pod-first/, 'the denial names the default that exists');
  const lease = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: CLASS_KIND_FACTS.VolumeSnapshotClass.claimLease, namespace: identity.namespace });
  const claim = [...readClaims(lease.metadata?.annotations?.[CLAIMS_ANNOTATION]).values()].find((c) => c.driver === DRIVER);
  t.equal(claim?.class, 'pod-first', "the claim is recorded in the Lease in the manifests' namespace");
  t.equal(lease.spec?.holderIdentity, identity.env.POD_NAME, 'the Lease names the pod (POD_NAME)');
});

t.test('nothing in its log is a warning or an error', async (t) => {
  const problems = logLines(base().pod).filter((l) => l.level >= 40);
  t.same(
    problems.map((l) => l.msg),
    [],
    problems.map((l) => JSON.stringify(l)).join('\n'),
  );
});

t.test('SIGTERM: it exits 0, never having reached its memory limit', async (t) => {
  t.equal(await base().pod.stop(), 0);
  const { cgroup } = base().start;
  const peak = cgroup.peakBytes();
  if (peak !== undefined) {
    t.ok(peak < cgroup.limitBytes(), `peak ${(peak / 2 ** 20).toFixed(1)} MiB charged, of ${memoryLimitMb()} MiB`);
  }
});

/** A namespace's ranges as OpenShift's namespace controller writes them: a block of 10,000 ids. */
const OPENSHIFT_NAMESPACE = { [UID_RANGE]: '1000650000/10000', [SUPPLEMENTAL_GROUPS]: '1000650000/10000' };

t.test('on OpenShift: the overlay, with the uid and fsGroup restricted-v2 assigns, serves and exits 0', async (t) => {
  const overlay = deploymentSecurity(renderedPod('overlays/openshift'));
  t.same([overlay.runAsUser, overlay.runAsGroup], [undefined, undefined], 'the overlay leaves uid and gid to the SCC');
  t.throws(
    () => restrictedV2(OPENSHIFT_NAMESPACE, deploymentSecurity()),
    /runAsUser 65532 is not in/,
    "restricted-v2 would reject the base's fixed uid: the reason the overlay drops it",
  );
  const security = restrictedV2(OPENSHIFT_NAMESPACE, overlay);
  const { pod, start } = await startPod(security, 'snapshot-webhook-openshift');
  const pid = pod.child.pid as number;
  const status = procStatus(pid);
  t.equal(status.Uid, '1000650000\t1000650000\t1000650000\t1000650000', 'the first uid of the namespace range');
  t.equal(status.Gid, '0\t0\t0\t0', 'gid 0: the uid is in no /etc/passwd entry of the image');
  t.equal(status.Groups?.trim(), '0 1000650000', 'its gid, and the fsGroup as a supplementary group');
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  t.ok(environ.includes(`HOME=${container.workingDir}`), 'HOME is the WORKDIR, from the entry CRI-O adds to /etc/passwd');
  const token = statSync(`/proc/${pid}/root${SERVICE_ACCOUNT_DIR}/token`);
  t.same(
    [token.uid, token.gid, token.mode & 0o7777],
    [1000650000, 1000650000, 0o640],
    "the token is the pod's user's and the fsGroup's, 0640, as the kubelet writes it",
  );

  const verbose = await httpsGet(port, '/readyz?verbose', ca);
  t.equal(verbose.status, 200);
  t.notMatch(verbose.body, /^\[-\]/m, `no check failed:\n${verbose.body}`);
  t.match(verbose.body, /^\[\+\]permissions ok$/m, 'it read its token and the permission review passed');
  const objects = snapshotObjects(kc);
  const third = await rejection(objects.create(VSCLASS, klass(VSCLASS, 'pod-third', DRIVER, true)));
  t.match(third, /pod-first/, 'through the apiserver, a second default for the driver is denied, naming the first');
  t.same(
    logLines(pod)
      .filter((l) => l.level >= 40)
      .map((l) => l.msg),
    [],
    'nothing in its log is a warning or an error',
  );
  t.equal(await pod.stop(), 0, 'SIGTERM: it exits 0');
  const peak = start.cgroup.peakBytes();
  if (peak !== undefined) t.ok(peak < start.cgroup.limitBytes(), 'never having reached its memory limit');
});
