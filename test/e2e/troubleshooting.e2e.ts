// docs/troubleshooting.md, kept true: each failure an operator meets is made on the real apiserver, and what
// kubectl prints is captured and must appear in the page word for word (loopback ports written as PORT). The
// messages are captured on the current release only (1.36.2): older apiservers word TLS and dial errors
// differently, and the page says which release it quotes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ensureDevCerts, devCertPaths } from '../../src/certs/dev-certs.js';
import { runCli } from '../helpers/cli.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, wireConversion } from './crds.js';
import { kube } from './kube.js';
import { freePort, stopAll } from './processes.js';
import { DRIVER, klass, NS, snapshotObjects, VGS, VSCLASS } from './snapshot-objects.js';
import { httpsGet, startWebhook, untilCalled, webhookConfigurations, type TestWebhook } from './webhook.js';

const CAPTURED_ON = '1.36.2';
const skip = kube.version === CAPTURED_ON ? false : `the page quotes kube-apiserver ${CAPTURED_ON}`;
const DOC = readFileSync(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-trouble-'));
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
let silent: Server | undefined;
const held: Socket[] = [];
t.teardown(async () => {
  held.forEach((s) => s.destroy());
  silent?.close();
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(args: readonly string[], input?: string, kubeconfig = (cluster as TestCluster).kubeconfig) {
  const r = spawnSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { encoding: 'utf8', input, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What kubectl printed, with loopback ports as PORT (they change from run to run). */
const portless = (text: string): string => text.trim().replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');

/** Registers the project's webhook configuration pointed at `port` with `caBundle`, replacing any before it. */
function register(port: number, caBundle: string): void {
  kubectl(['delete', 'validatingwebhookconfiguration', '--all', '--ignore-not-found']);
  const list = { apiVersion: 'v1', kind: 'List', items: webhookConfigurations(port, caBundle) };
  const r = kubectl(['create', '-f', '-'], JSON.stringify(list));
  if (r.status !== 0) throw new Error(r.stderr);
}

const defaultClass = (name: string): string => JSON.stringify(klass(VSCLASS, name, DRIVER, true));

/** Tries a write until the apiserver's answer stops changing (a new configuration takes a moment to apply). */
async function settled(attempt: () => string, expect: RegExp): Promise<string> {
  let last = '';
  for (let i = 0; i < 50; i++) {
    last = attempt();
    if (expect.test(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  return last;
}

/** The page must quote `captured` word for word. */
function quoted(t: Test, what: string, captured: string): void {
  t.comment(`${what}: ${captured}`);
  t.ok(DOC.includes(captured), `docs/troubleshooting.md quotes it: ${captured}`);
}

t.before(async () => {
  if (skip !== false) return;
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'current');
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  webhook = await startWebhook(dir, cluster.kubeconfig);
});

t.test('a wrong caBundle', { skip }, async (t) => {
  const other = join(dir, 'other-ca');
  await ensureDevCerts(other);
  const wrong = readFileSync(devCertPaths(other).caFile).toString('base64');
  const w = webhook as TestWebhook;
  register(w.port, wrong);
  const error = await settled(
    () => portless(kubectl(['create', '-f', '-'], defaultClass('wrong-ca')).stderr),
    /failed calling webhook/,
  );
  quoted(t, 'kubectl', error);
  const metrics = await httpsGet(w.port, '/metrics', readFileSync(devCertPaths(join(dir, 'webhook-certs')).caFile));
  t.match(metrics.body, /^snapshot_webhook_tls_handshake_failures_total\{reason="certificate-rejected"\} [1-9]/m, 'counted');
  quoted(t, 'metric', 'snapshot_webhook_tls_handshake_failures_total{reason="certificate-rejected"}');
});

t.test('the webhook is unreachable', { skip }, async (t) => {
  register(await freePort(), (webhook as TestWebhook).caBundle);
  const error = await settled(
    () => portless(kubectl(['create', '-f', '-'], defaultClass('unreachable')).stderr),
    /connection refused/,
  );
  quoted(t, 'kubectl', error);
});

t.test('the webhook does not answer in time', { skip }, async (t) => {
  const port = await freePort();
  // Accepts connections and never answers: a hung or overloaded pod.
  silent = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => (silent as Server).listen(port, '127.0.0.1', resolve));
  register(port, (webhook as TestWebhook).caBundle);
  const error = await settled(
    () => portless(kubectl(['create', '-f', '-'], defaultClass('slow')).stderr),
    /failed calling webhook/,
  );
  quoted(t, 'kubectl', error);
});

const LEASE_OF_CLASSES = 'leases.coordination.k8s.io/snapshot-webhook-default-volumesnapshotclass ';

t.test('RBAC missing: the webhook cannot read the classes', { skip }, async (t) => {
  const c = cluster as TestCluster;
  const blind = await startWebhook(join(dir, 'blind'), c.kubeconfigFor('no-rbac'), ['--namespace=snapshot-webhook']);
  t.teardown(() => blind.process.stop());
  register(blind.port, blind.caBundle);
  const error = await settled(() => kubectl(['create', '-f', '-'], defaultClass('blind')).stderr.trim(), /denied the request/);
  quoted(t, 'kubectl', error);
  const blindCa = readFileSync(devCertPaths(join(dir, 'blind', 'webhook-certs')).caFile);
  const verbose = await httpsGet(blind.port, '/readyz?verbose', blindCa);
  // Both class kinds are forbidden and their watchers log in either order: the line for the kind kubectl named.
  const forbiddenLine = /forbidden to list volumesnapshotclasses/;
  const forbidden = await settled(
    () =>
      blind.process
        .output()
        .split('\n')
        .find((l) => forbiddenLine.test(l)) ?? '',
    forbiddenLine,
  );
  t.ok(forbidden, 'a log line says forbidden');
  quoted(t, 'the log line', (JSON.parse(forbidden || '{}') as { msg?: string }).msg ?? '(none)');
  t.match(verbose.body, /^readyz check passed$/m, 'still ready: only default-class writes wait (docs/operations.md)');
  // Asked at start: within 10 s of it every missing permission shows three ways (docs/operations.md).
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8').replace(/\n\s*/g, ' ');
  t.match(
    verbose.body,
    /^\[-\]permissions failed \(not counted: still ready\): cannot list volumesnapshotclasses\.snapshot\.storage\.k8s\.io: /m,
  );
  // One line per Lease, in either order: the one for VolumeSnapshotClasses, which docs/operations.md quotes.
  const lease = blind.process
    .output()
    .split('\n')
    .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { level?: number; msg?: string }) : {}))
    .find((l) => l.level === 50 && l.msg?.startsWith(`missing permission: cannot update ${LEASE_OF_CLASSES}`));
  t.ok(lease?.msg !== undefined && operations.includes(lease.msg), `docs/operations.md quotes the log line: ${lease?.msg}`);
  const metrics = await httpsGet(blind.port, '/metrics', blindCa);
  t.match(
    metrics.body,
    /^snapshot_webhook_permission_missing\{verb="update",resource="leases\.coordination\.k8s\.io"\} 2$/m,
    'the metric',
  );
});

t.test('two defaults already present', { skip }, async (t) => {
  kubectl(['delete', 'validatingwebhookconfiguration', '--all', '--ignore-not-found']);
  for (const name of ['first', 'second'])
    t.equal(kubectl(['create', '-f', '-'], defaultClass(name)).status, 0, `${name} made unchecked`);
  const w = webhook as TestWebhook;
  register(w.port, w.caBundle);
  await untilCalled(snapshotKc());
  const third = kubectl(['create', '-f', '-'], defaultClass('third')).stderr.trim();
  quoted(t, 'a third default', third);
  const warned = kubectl(['label', 'volumesnapshotclass', 'first', 'touched=yes']).stderr.trim();
  quoted(t, 'an update of one of the two', warned);
  const audit = runCli(['audit', `--kubeconfig=${(cluster as TestCluster).kubeconfig}`]);
  const line = audit.stdout.split('\n').find((l) => l.startsWith('defaults:')) ?? '(none)';
  quoted(t, 'audit', line);
});

t.test('conversion failing', { skip }, async (t) => {
  kubectl(['delete', 'validatingwebhookconfiguration', '--all', '--ignore-not-found']);
  const objects = snapshotObjects(snapshotKc());
  await objects.create(VGS, { metadata: { name: 'group-1' }, spec: { source: { selector: { matchLabels: { app: 'db' } } } } });
  await wireConversion(snapshotKc(), await freePort(), (webhook as TestWebhook).caBundle);
  const error = await settled(
    // The last line: kubectl first warns that v1beta1 is deprecated.
    () =>
      portless(
        kubectl(['get', 'volumegroupsnapshots.v1beta1.groupsnapshot.storage.k8s.io', '-n', NS])
          .stderr.trim()
          .split('\n')
          .at(-1) ?? '',
      ),
    /conversion webhook/,
  );
  quoted(t, 'kubectl get at another version', error);
});

function snapshotKc(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile((cluster as TestCluster).kubeconfig);
  return kc;
}
