// A webhook outage with the real snapshot-controller (v8.6.0 on the current releases) and the shipped base
// registration: every replica gone (the process stopped: connections refused) and every replica hung (SIGSTOP: the
// kernel accepts the connection, nothing answers). In each state, and once up again, the same flows run: a dynamic
// snapshot gets its content and is bound, its deletion completes, a dynamic group snapshot completes, a new default
// class is refused with the apiserver's message naming the webhook, and a plain class is admitted. After recovery the
// next default is checked exactly. The group snapshot CRDs are installed as docs/install.md gives them for v8.6
// (conversion, v1 stored). The comments print what each write waited, by kind, and how long each flow took.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { missingTool } from '../helpers/tools.mjs';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, storeV1, wireConversion } from './crds.js';
import { kube } from './kube.js';
import { stopAll, waitFor, type Started } from './processes.js';
import { bindControllerUser, startController } from './snapshot-controller.js';
import {
  DRIVER,
  klass,
  NS,
  rejection,
  snapshotObjects,
  VGS as VGS_STORED,
  VGSC as VGSC_STORED,
  VGSCLASS as VGSCLASS_STORED,
  VS,
  VSC,
  VSCLASS,
  type Target,
} from './snapshot-objects.js';
import { registerWebhook, startWebhook, untilCalled, type TestWebhook } from './webhook.js';

/** The group kinds at v1, as kubectl (the preferred version), the v8.6 controller and its sidecar write them. */
const VGS: Target = { ...VGS_STORED, version: 'v1' };
const VGSCLASS: Target = { ...VGSCLASS_STORED, version: 'v1' };
const VGSC: Target = { ...VGSC_STORED, version: 'v1' };

const missing = missingTool(kube.controllerTool);
const skip = !kube.admissionPolicies
  ? `on ${kube.version} every snapshot write waits for the webhook (no matchConditions): docs/install.md`
  : missing;

// Only when the file runs: a file that skips ends at its plan, before any teardown it would register.
const dir = skip === undefined ? mkdtempSync(join(tmpdir(), 'sw-e2e-outage-')) : '';
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
let controller: Started | undefined;
let objects: ReturnType<typeof snapshotObjects>;
t.teardown(async () => {
  webhook?.process.child.kill('SIGCONT');
  await controller?.stop();
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

type State = 'down' | 'hung' | 'up';
/** Each state's flow durations and each kind's write, in ms, and the default class's answer. */
const results = new Map<State, { flows: Record<string, number>; writes: Record<string, number>; defaultClass: string }>();

const timed = async <T>(action: () => Promise<T>): Promise<[T, number]> => {
  const started = Date.now();
  const value = await action();
  return [value, Date.now() - started];
};

/** One write of each kind a user makes, timed: what waits for the webhook in this state, and for how long. */
async function writesByKind(state: State): Promise<Record<string, number>> {
  const { create } = objects;
  const writes: [string, Target, Record<string, unknown>][] = [
    ['VolumeSnapshot', VS, { metadata: { name: `w-${state}` }, spec: { source: { persistentVolumeClaimName: 'none' } } }],
    [
      'VolumeSnapshotContent',
      VSC,
      {
        metadata: { name: `w-${state}` },
        spec: {
          driver: 'w.csi.example.com',
          deletionPolicy: 'Retain',
          source: { snapshotHandle: `h-${state}` },
          volumeSnapshotRef: { name: `w-${state}`, namespace: NS },
        },
      },
    ],
    ['VolumeSnapshotClass (plain)', VSCLASS, klass(VSCLASS, `w-plain-${state}`, 'w.csi.example.com', false)],
    [
      'VolumeGroupSnapshot',
      VGS,
      { metadata: { name: `w-${state}` }, spec: { source: { selector: { matchLabels: { w: state } } } } },
    ],
    ['VolumeGroupSnapshotClass (plain)', VGSCLASS, klass(VGSCLASS, `w-plain-${state}`, 'w.csi.example.com', false)],
  ];
  const waited: Record<string, number> = {};
  for (const [kind, target, body] of writes) {
    const [outcome, ms] = await timed(() => rejection(create(target, body as never)));
    t.equal(outcome, '(admitted)', `${state}: a ${kind} is admitted`);
    waited[kind] = ms;
  }
  return waited;
}

/** The flows the controller runs for a user; returns each one's duration in ms. */
async function controllerFlows(state: State): Promise<Record<string, number>> {
  const { get, create, remove, gone, boundClaim, sidecarReleases, sidecarReportsGroup } = objects;
  const flows: Record<string, number> = {};
  await boundClaim(`data-${state}`, DRIVER);
  let content = '';
  [, flows['dynamic snapshot bound']] = await timed(async () => {
    const snapshot = await create(VS, {
      metadata: { name: `dynamic-${state}` },
      spec: { source: { persistentVolumeClaimName: `data-${state}` } },
    });
    await waitFor(
      `${state}: the dynamic snapshot's content, bound`,
      async () => {
        content = String((await get(VS, `dynamic-${state}`)).status?.boundVolumeSnapshotContentName ?? '');
        if (content === '') return false;
        const made = await get(VSC, content).catch(() => undefined);
        return (made?.spec?.volumeSnapshotRef as { uid?: string } | undefined)?.uid === snapshot.metadata.uid;
      },
      60_000,
      250,
    );
  });
  [, flows['deletion completed']] = await timed(async () => {
    await remove(VS, `dynamic-${state}`);
    await sidecarReleases(VSC, content);
    await waitFor(
      `${state}: snapshot and content gone`,
      async () => (await gone(VS, `dynamic-${state}`)) && gone(VSC, content),
      60_000,
      250,
    );
  });
  await boundClaim(`db-${state}`, DRIVER, { app: `db-${state}` });
  [, flows['group snapshot ready']] = await timed(async () => {
    await create(VGS, {
      metadata: { name: `group-${state}` },
      spec: { source: { selector: { matchLabels: { app: `db-${state}` } } } },
    });
    let groupContent = '';
    await waitFor(
      `${state}: the group content`,
      async () =>
        (groupContent = String((await get(VGS, `group-${state}`)).status?.boundVolumeGroupSnapshotContentName ?? '')) !== '',
      60_000,
      250,
    );
    await sidecarReportsGroup(groupContent, `group-handle-${state}`, [`vol-db-${state}`], VGSC);
    await waitFor(
      `${state}: the group ready`,
      async () => (await get(VGS, `group-${state}`)).status?.readyToUse === true,
      60_000,
      250,
    );
  });
  return flows;
}

async function runState(state: State): Promise<void> {
  const flows = await controllerFlows(state);
  const writes = await writesByKind(state);
  const [defaultClass, ms] = await timed(() =>
    rejection(objects.create(VSCLASS, klass(VSCLASS, `default-${state}`, `${state}.csi.example.com`, true))),
  );
  writes['VolumeSnapshotClass (default)'] = ms;
  results.set(state, { flows, writes, defaultClass });
}

if (skip !== undefined) t.plan(0, skip);
else {
  t.before(async () => {
    cluster = await startCluster(dir);
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    objects = snapshotObjects(kc);
    await installCrds(kc, 'current');
    await objects.core.createNamespace({ body: { metadata: { name: NS } } });
    await bindControllerUser(kc);
    webhook = await startWebhook(dir, cluster.kubeconfig);
    // The install docs/install.md gives for v8.6 CRDs: conversion, with v1 stored, so that the v1 controller's reads
    // and writes never call the webhook (an outage would stop its group snapshot informers).
    await wireConversion(kc, webhook.port, webhook.caBundle);
    await storeV1(kc);
    await registerWebhook(kc, webhook.port, webhook.caBundle);
    await untilCalled(kc);
    await objects.create(VSCLASS, klass(VSCLASS, 'hostpath-default', DRIVER, true));
    await objects.create(VGSCLASS, klass(VGSCLASS, 'group-default', DRIVER, true));
    controller = startController(kube.controllerTool, dir, cluster);
  });

  t.test('every replica gone: the flows complete, a new default is refused naming the webhook', async (t) => {
    await webhook?.process.stop();
    await runState('down');
    t.match(
      results.get('down')?.defaultClass,
      /failed calling webhook "validation-webhook\.snapshot\.storage\.k8s\.io".*connection refused/,
      'a new default class: refused with the apiserver message naming the webhook',
    );
  });

  t.test('every replica hung: the flows complete, a new default is refused naming the webhook', async (t) => {
    webhook = await startWebhook(dir, (cluster as TestCluster).kubeconfig, [], true, webhook?.port);
    webhook.process.child.kill('SIGSTOP');
    try {
      await runState('hung');
    } finally {
      webhook.process.child.kill('SIGCONT');
    }
    t.match(
      results.get('hung')?.defaultClass,
      /failed calling webhook "validation-webhook\.snapshot\.storage\.k8s\.io".*(deadline|timeout|Timeout)/,
      'a new default class: refused after the timeout, with the apiserver message naming the webhook',
    );
  });

  t.test('up again: the flows complete, and the next default is checked exactly', async (t) => {
    await waitFor('webhook ready after SIGCONT', () => (webhook as TestWebhook).ready(), 30_000, 250);
    await runState('up');
    t.equal(results.get('up')?.defaultClass, '(admitted)', 'the first default of a new driver is admitted');
    const second = await rejection(objects.create(VSCLASS, klass(VSCLASS, 'second-up', 'up.csi.example.com', true)));
    t.match(
      second,
      /denied the request: default snapshot class: default-up already exists for driver: up\.csi\.example\.com; to move the default, first remove it from default-up:/,
      'a second default for that driver is denied with the rule message',
    );
    const plainLabel = await objects.get(VSCLASS, 'hostpath-default');
    t.ok(plainLabel.metadata.name, 'the default made before the outage is still there');
  });

  t.test('what waited, by kind, and how long each flow took', async (t) => {
    const states: State[] = ['down', 'hung', 'up'];
    const row = (label: string, pick: (s: State) => number | undefined): string =>
      `| ${label} | ${states.map((s) => `${pick(s) ?? '-'} ms`).join(' | ')} |`;
    t.comment(`| write or flow (${kube.version}, controller ${kube.controllerTool}) | down | hung | up |`);
    for (const kind of Object.keys(results.get('up')?.writes ?? {})) t.comment(row(kind, (s) => results.get(s)?.writes[kind]));
    for (const flow of Object.keys(results.get('up')?.flows ?? {})) t.comment(row(flow, (s) => results.get(s)?.flows[flow]));
    t.equal(results.size, 3, 'every state ran');
  });
}
