// Moving a driver's default from one class to another (docs/operations.md, "Moving a driver's default"), with
// kubectl's own apply and annotate against the real apiserver and the webhook as shipped: one file that holds the
// end state, in both orders, and the two steps with a VolumeSnapshot that names no class created between them,
// which the real snapshot-controller then gives the new default (where the controller is present).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { missingTool } from '../helpers/tools.mjs';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { stopAll, waitFor, type Started } from './processes.js';
import { bindControllerUser, startController } from './snapshot-controller.js';
import { CONTROLLER_USER, DRIVER, klass, NS, snapshotObjects, VS, VSCLASS } from './snapshot-objects.js';
import { registerWebhook, startWebhook, untilCalled, type TestWebhook } from './webhook.js';

const FILES = fileURLToPath(new URL('../fixtures/cli/move-default/', import.meta.url));
const ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-move-'));
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
let controller: Started | undefined;
let objects: ReturnType<typeof snapshotObjects>;
t.teardown(async () => {
  await controller?.stop();
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** kubectl against the test cluster: its exit status and what it printed. */
function kubectl(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync('kubectl', [`--kubeconfig=${(cluster as TestCluster).kubeconfig}`, ...args], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

/** The driver's default classes now. */
async function defaults(): Promise<string[]> {
  const classes = await objects.list(VSCLASS);
  return classes
    .filter((c) => c.driver === DRIVER && c.metadata.annotations?.[ANNOTATION] === 'true')
    .map((c) => c.metadata.name)
    .sort();
}

/** slow the default, fast a plain class: the state every test starts from. */
async function slowIsTheDefault(): Promise<void> {
  for (const name of ['fast', 'slow']) kubectl('delete', 'volumesnapshotclass', name, '--ignore-not-found');
  await objects.create(VSCLASS, klass(VSCLASS, 'slow', DRIVER, true));
  await objects.create(VSCLASS, klass(VSCLASS, 'fast', DRIVER, false));
}

t.before(async () => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  objects = snapshotObjects(kc);
  await installCrds(kc, 'controller');
  await objects.core.createNamespace({ body: { metadata: { name: NS } } });
  webhook = await startWebhook(dir, cluster.kubeconfig);
  await registerWebhook(kc, webhook.port, webhook.caBundle);
  await untilCalled(kc);
});

t.test('one file with the end state, the new default first: fast denied, the driver left with no default', async (t) => {
  await slowIsTheDefault();
  const applied = kubectl('apply', '-f', join(FILES, 'fast-first.yaml'));
  t.not(applied.status, 0, 'kubectl apply fails');
  t.match(
    applied.output,
    /denied the request: default snapshot class: slow already exists for driver: hostpath\.csi\.k8s\.io; to move the default/,
  );
  t.match(applied.output, /volumesnapshotclass\.snapshot\.storage\.k8s\.io\/slow configured/, 'and slow is changed after it');
  t.same(await defaults(), [], 'the driver has no default: what validate --kubeconfig warns of');
  const again = kubectl('apply', '-f', join(FILES, 'fast-first.yaml'));
  t.equal(again.status, 0, `a second apply completes it: ${again.output}`);
  t.same(await defaults(), ['fast']);
});

t.test('one file with the end state, the old default first: both applied, fast the default', async (t) => {
  await slowIsTheDefault();
  const applied = kubectl('apply', '-f', join(FILES, 'slow-first.yaml'));
  t.equal(applied.status, 0, applied.output);
  t.same(await defaults(), ['fast']);
});

t.test("the denial's own command, then the new default: the two steps of docs/operations.md", async (t) => {
  await slowIsTheDefault();
  const denied = kubectl('annotate', 'volumesnapshotclass', 'fast', `${ANNOTATION}=true`, '--overwrite');
  const command = /kubectl annotate volumesnapshotclasses slow \S+-/.exec(denied.output)?.[0];
  t.ok(command, `the denial names the command: ${denied.output}`);
  const removed = kubectl(...(command ?? '').split(' ').slice(1));
  t.equal(removed.status, 0, removed.output);
  const made = kubectl('annotate', 'volumesnapshotclass', 'fast', `${ANNOTATION}=true`, '--overwrite');
  t.equal(made.status, 0, made.output);
  t.same(await defaults(), ['fast']);
});

const needsController = missingTool(kube.controllerTool);
t.test(
  'a VolumeSnapshot naming no class, made between the two steps, waits and then gets the new default',
  { skip: needsController ?? false },
  async (t) => {
    const kc = new KubeConfig();
    kc.loadFromFile((cluster as TestCluster).kubeconfig);
    await bindControllerUser(kc);
    const test = cluster as TestCluster;
    controller = startController(kube.controllerTool, dir, test, test.kubeconfigFor(CONTROLLER_USER), 'as shipped');
    await slowIsTheDefault();
    await objects.boundClaim('between', DRIVER);
    t.equal(kubectl('annotate', 'volumesnapshotclass', 'slow', `${ANNOTATION}-`).status, 0, 'step 1: slow is no default');
    await objects.create(VS, { metadata: { name: 'between' }, spec: { source: { persistentVolumeClaimName: 'between' } } });
    const pause = 5000;
    await new Promise((resolve) => setTimeout(resolve, pause));
    const waiting = await objects.get(VS, 'between');
    t.equal(waiting.spec?.volumeSnapshotClassName, undefined, `${pause / 1000} s with no default: the snapshot has no class`);
    const stepTwo = Date.now();
    t.equal(kubectl('annotate', 'volumesnapshotclass', 'fast', `${ANNOTATION}=true`).status, 0, 'step 2: fast is the default');
    await waitFor(
      'the snapshot gets the new default and a content',
      async () => {
        const now = await objects.get(VS, 'between');
        return now.spec?.volumeSnapshotClassName === 'fast' && typeof now.status?.boundVolumeSnapshotContentName === 'string';
      },
      60_000,
      250,
    );
    t.comment(`the snapshot made between the steps got class fast and a content ${Date.now() - stepTwo} ms after step 2`);
    const events = (await objects.core.listNamespacedEvent({ namespace: NS })).items.filter(
      (e) => e.involvedObject.name === 'between',
    );
    for (const e of events) t.comment(`event on the snapshot: ${e.reason} (x${e.count ?? 1}): ${e.message}`);
  },
);
