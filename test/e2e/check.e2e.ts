// `snapshot-webhook check` (docs/cli.md) against the real apiserver, one cause at a time, each made as an operator
// meets it: no CRDs, no registration, a caBundle of another CA, a url where nothing listens, a webhook that accepts
// and never answers, the base's Service with no endpoint, CRDs without CEL under the base's matchConditions (1.30 and
// later: the 1.20 registration has no matchConditions, so the cause cannot arise there and must not be reported),
// conversion wired to a webhook that is gone; then live, with a default that exists and on a cluster with none
// (check makes its own and deletes it), with --wait across a webhook that starts late, and -o json.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';
import { ApiextensionsV1Api, KubeConfig } from '@kubernetes/client-node';
import { ensureDevCerts, devCertPaths } from '../../src/certs/dev-certs.js';
import { renderedManifests } from '../helpers/deployment.mjs';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, readCrds, untilServedFromCache, wireConversion } from './crds.js';
import { kube, UNTYPED_CRDS } from './kube.js';
import { freePort, runToEnd, stopAll, waitFor, type Finished } from './processes.js';
import { DRIVER, klass, snapshotObjects, VSCLASS } from './snapshot-objects.js';
import { registerWebhook, startWebhook, untilCalled, type TestWebhook } from './webhook.js';
import { kubectlOn } from './outside-a-pod.js';

const MAIN = resolve('dist/bundle/main.js');
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-check-'));
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

/** The check command as a script runs it: its exit status and output, each answer in the log (what each release words). */
async function check(...args: string[]): Promise<Finished> {
  const r = await runToEnd(process.execPath, [MAIN, 'check', `--kubeconfig=${(cluster as TestCluster).kubeconfig}`, ...args]);
  t.comment(`check ${args.join(' ')} -> ${r.status}: ${r.stdout.trim()}`);
  return r;
}

/** Waits until the apiserver uses the configuration just registered (a new one takes a moment to apply). */
async function settled(expect: RegExp): Promise<{ status: number | null; stdout: string }> {
  let last = { status: null as number | null, stdout: '' };
  for (let i = 0; i < 20 && !expect.test(last.stdout); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 500));
    last = await check();
  }
  return last;
}

const kubectl = (...args: string[]) => kubectlOn(cluster as TestCluster, args);
const classNames = (): string[] =>
  kubectl('get', 'volumesnapshotclasses', '-o', 'name').stdout.trim().split('\n').filter(Boolean);
let kc: KubeConfig;
let caBundle = '';

t.before(async () => {
  cluster = await startCluster(dir);
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
});

t.test('no CRDs: the crds cause, exit 1', async (t) => {
  const r = await check();
  t.equal(r.status, 1);
  t.match(r.stdout, /^Not ready: snapshot\.storage\.k8s\.io\/v1 volumesnapshotclasses is not served: install the snapshot CRDs/m);
});

t.test('CRDs and no registration: the registration cause', async (t) => {
  await installCrds(kc, 'current');
  await untilServedFromCache(kc, 'current');
  webhook = await startWebhook(dir, (cluster as TestCluster).kubeconfig);
  caBundle = webhook.caBundle;
  const r = await check();
  t.equal(r.status, 1);
  t.match(r.stdout, /^Not ready: no ValidatingWebhookConfiguration or ValidatingAdmissionPolicy binding is registered/m);
});

t.test('a caBundle of another CA: the ca-bundle cause', async (t) => {
  const other = join(dir, 'other-ca');
  await ensureDevCerts(other);
  await registerWebhook(kc, (webhook as TestWebhook).port, readFileSync(devCertPaths(other).caFile).toString('base64'));
  const r = await settled(/caBundle/);
  t.equal(r.status, 1);
  t.match(
    r.stdout,
    /^Not ready: the caBundle of validation-webhook\.snapshot\.storage\.k8s\.io does not verify the serving certificate at https:\/\/127\.0\.0\.1:\d+\/validate: .*x509/m,
  );
});

t.test('a url where nothing listens: the refused cause', async (t) => {
  await registerWebhook(kc, await freePort(), caBundle);
  const r = await settled(/refuses connections/);
  t.equal(r.status, 1);
  t.match(
    r.stdout,
    /^Not ready: validation-webhook\.snapshot\.storage\.k8s\.io refuses connections at https:\/\/127\.0\.0\.1:\d+\/validate: .*connection refused/m,
  );
});

t.test('a webhook that accepts and never answers: the timeout cause', async (t) => {
  silent = createServer((socket) => held.push(socket));
  await new Promise<void>((r) => (silent as Server).listen(0, '127.0.0.1', r));
  const address = silent.address();
  await registerWebhook(kc, typeof address === 'object' && address !== null ? address.port : 0, caBundle);
  const r = await settled(/did not answer/);
  t.equal(r.status, 1);
  t.match(r.stdout, /^Not ready: validation-webhook\.snapshot\.storage\.k8s\.io did not answer within its timeoutSeconds/m);
});

t.test("the base's registration with no Service behind it: the no-endpoint cause", async (t) => {
  kubectl('delete', 'validatingwebhookconfiguration', '--all');
  const configs = renderedManifests(kube.components).filter((d) => d.kind === 'ValidatingWebhookConfiguration');
  for (const config of configs)
    t.equal(kubectlOn(cluster as TestCluster, ['create', '-f', '-'], JSON.stringify(config)).status, 0);
  const r = await settled(/no ready endpoint/);
  t.equal(r.status, 1);
  t.match(
    r.stdout,
    /^Not ready: no ready endpoint for validation-webhook\.snapshot\.storage\.k8s\.io at https:\/\/snapshot-webhook\.snapshot-webhook\.svc/m,
  );
});

t.test('live, with a default that exists: denied for its driver, nothing written', async (t) => {
  await registerWebhook(kc, (webhook as TestWebhook).port, caBundle);
  await untilCalled(kc);
  await snapshotObjects(kc).create(VSCLASS, klass(VSCLASS, 'existing', DRIVER, true));
  const before = classNames();
  const r = await settled(/is live/);
  t.equal(r.status, 0, r.stdout);
  t.match(
    r.stdout,
    `The default-class rule is live: a second default VolumeSnapshotClass for driver ${DRIVER} was denied (dry run): admission webhook "validation-webhook.snapshot.storage.k8s.io" denied the request: default snapshot class: existing already exists for driver: ${DRIVER}`,
  );
  t.same(classNames(), before, 'no class written');
});

t.test('live on a cluster with no default: its own first default, deleted again', async (t) => {
  kubectl('delete', 'volumesnapshotclass', 'existing');
  const r = await check();
  t.equal(r.status, 0, r.stdout);
  t.match(
    r.stdout,
    /a second default VolumeSnapshotClass for driver \S+\.check\.snapshot-webhook\.invalid was denied \(dry run\)/,
  );
  t.same(classNames(), [], 'the class check made is gone');
});

t.test('--wait: not ready while the webhook is down, live once it is back', async (t) => {
  const hook = webhook as TestWebhook;
  await hook.process.stop();
  const waiting = check('--wait=60s');
  await new Promise((r) => setTimeout(r, 5000));
  webhook = await startWebhook(dir, (cluster as TestCluster).kubeconfig, [], true, hook.port);
  const r = await waiting;
  t.equal(r.status, 0, r.stdout);
  t.match(
    r.stdout,
    /^Not ready: validation-webhook\.snapshot\.storage\.k8s\.io refuses connections/m,
    'a line per try while down',
  );
  t.match(r.stdout, /^The default-class rule is live:/m, 'then live');
});

t.test('-o json: the last try, with its causes by id', async (t) => {
  const live = JSON.parse((await check('-o', 'json')).stdout) as { live: boolean; causes: unknown[]; tries: number };
  t.same({ live: live.live, causes: live.causes, tries: live.tries }, { live: true, causes: [], tries: 1 });
  const deadPort = await freePort();
  await wireConversion(kc, deadPort, caBundle);
  const wired = await check('-o', 'json');
  t.equal(wired.status, 1, 'conversion wired to nothing: not ready, though the default-class rule holds');
  const answer = JSON.parse(wired.stdout) as { live: boolean; causes: { cause: string; message: string }[] };
  t.same(
    answer.causes.map((c) => c.cause),
    ['conversion'],
  );
  t.match(answer.causes[0]?.message ?? '', /^conversion is wired on the group snapshot CRDs but fails: .*conversion webhook/);
});

t.test("CRDs without CEL under the base's matchConditions: the cel cause where matchConditions exist", async (t) => {
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const name = 'volumesnapshots.snapshot.storage.k8s.io';
  await extensions.deleteCustomResourceDefinition({ name });
  const gone = async (): Promise<boolean> =>
    extensions.readCustomResourceDefinition({ name }).then(
      () => false,
      () => true,
    );
  await waitFor(`${name} deleted`, gone, 30_000, 250);
  const untyped = readCrds(UNTYPED_CRDS).find((c) => c.metadata?.name === name);
  await extensions.createCustomResourceDefinition({ body: untyped as never });
  const r = await check();
  if (kube.admissionPolicies) {
    t.match(
      r.stdout,
      /^Not ready: .*validation-webhook\.snapshot\.storage\.k8s\.io leave each VolumeSnapshot's checks to the CRDs' CEL rules/m,
    );
  } else {
    t.notMatch(r.stdout, 'CEL rules', `${kube.version} registers no matchConditions: nothing is left to CEL`);
  }
});
