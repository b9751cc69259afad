// Flows of controller.e2e.ts: the real snapshot-controller (upstream, unmodified: v8.4.0 on 1.20, v8.6.0 on 1.36) as a client of the webhook:
// against the real kube-apiserver with the CRDs of its release and our webhook registered in enforce mode, it
// binds static snapshots and group snapshots, sets default classes, creates contents and member snapshots, and
// deletes. On 1.36 the v8.4.0 controller then takes over what v8.6.0 wrote at v1. Each flow asserts what the
// controller wrote and that the webhook denied none of its writes. The registration is the caller's: the shipped
// base (controller.e2e.ts) or every snapshot write sent with failurePolicy Fail (controller-every-write.e2e.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { stopAll, waitFor, type Started } from './processes.js';
import { bindControllerUser, startController } from './snapshot-controller.js';
import { installCrds, wireConversion } from './crds.js';
import { kube } from './kube.js';
import {
  CONTROLLER_USER,
  DRIVER,
  klass,
  NS,
  rejection,
  snapshotObjects,
  VGS,
  VGSC,
  VGSCLASS,
  VS,
  VSC,
  VSCLASS,
  type Obj,
} from './snapshot-objects.js';
import { followDecisions, startWebhook, untilCalled, registerWebhook, type DecisionLine, type TestWebhook } from './webhook.js';

/**
 * The flows, against a cluster whose webhook is registered as the base with `components` on top (test/e2e/webhook.ts
 * webhookConfigurations).
 */
export function controllerFlows(components: readonly string[]): void {
  const dir = mkdtempSync(join(tmpdir(), 'sw-controller-'));
  let cluster: TestCluster | undefined;
  let webhook: TestWebhook | undefined;
  let controller: Started | undefined;
  let objects: ReturnType<typeof snapshotObjects>;
  t.teardown(async () => {
    if (process.env.E2E_DEBUG) console.error(controller?.output().slice(-8000));
    await controller?.stop();
    await webhook?.process.stop();
    await cluster?.stop();
    stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The webhook's decision lines for the controller's own writes. */
  let controllerDecisions: () => readonly DecisionLine[] = () => [];

  t.before(async () => {
    cluster = await startCluster(dir);
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    objects = snapshotObjects(kc);
    const { core, create } = objects;
    await installCrds(kc, 'controller');
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await bindControllerUser(kc);
    // Two defaults for one driver that existed before the webhook was registered.
    await create(VSCLASS, klass(VSCLASS, 'twin-a', 'twin.csi.example.com', true));
    await create(VSCLASS, klass(VSCLASS, 'twin-b', 'twin.csi.example.com', true));

    webhook = await startWebhook(dir, cluster.kubeconfig);
    // What the project's install adds to upstream's CRDs: the v8.6.0 controller writes group snapshots at v1.
    if (kube.celLive) await wireConversion(kc, webhook.port, webhook.caBundle);
    controllerDecisions = followDecisions(webhook.process, CONTROLLER_USER);
    await registerWebhook(kc, webhook.port, webhook.caBundle, components);
    await untilCalled(kc);

    controller = startController(kube.controllerTool, dir, cluster);
  });

  /** Ends each flow: the webhook denied none of the controller's writes so far. */
  function noneDenied(t: Test): void {
    const denied = controllerDecisions()
      .slice(countedFrom)
      .filter((d) => !d.allowed);
    t.same(denied, [], "the webhook denied none of the controller's writes");
  }

  /** Decisions before this index were judged by the v8.4 takeover test itself (see there). */
  let countedFrom = 0;

  t.test('a pre-provisioned VolumeSnapshotContent and its VolumeSnapshot are bound both ways', async (t) => {
    const { get, create } = objects;
    await create(VSCLASS, klass(VSCLASS, 'static-class', DRIVER, false, 'Retain'));
    for (const [name, className] of [
      ['with-class', 'static-class'],
      ['without-class', undefined],
    ] as const) {
      const withClass = className === undefined ? {} : { volumeSnapshotClassName: className };
      await create(VSC, {
        metadata: { name: `content-${name}` },
        spec: {
          driver: DRIVER,
          deletionPolicy: 'Retain',
          source: { snapshotHandle: `handle-${name}` },
          volumeSnapshotRef: { name: `snap-${name}`, namespace: NS },
          ...withClass,
        },
      });
      const snapshot = await create(VS, {
        metadata: { name: `snap-${name}` },
        spec: { source: { volumeSnapshotContentName: `content-${name}` }, ...withClass },
      });
      await t.resolves(
        waitFor(
          `snap-${name} bound`,
          async () => {
            const content = await get(VSC, `content-${name}`);
            const bound = await get(VS, `snap-${name}`);
            return (
              (content.spec?.volumeSnapshotRef as { uid?: string }).uid === snapshot.metadata.uid &&
              bound.status?.boundVolumeSnapshotContentName === `content-${name}`
            );
          },
          30_000,
          250,
        ),
        `${name}: the content's ref carries the snapshot's uid and the snapshot names the content`,
      );
    }
    noneDenied(t);
  });

  t.test('a dynamic VolumeSnapshot without a class gets the default class and a content', async (t) => {
    const { get, create, boundClaim } = objects;
    await create(VSCLASS, klass(VSCLASS, 'hostpath-default', DRIVER, true));
    await boundClaim('data', DRIVER);
    const snapshot = await create(VS, { metadata: { name: 'dynamic' }, spec: { source: { persistentVolumeClaimName: 'data' } } });
    let contentName = '';
    await waitFor(
      'the controller set the class and created the content',
      async () => {
        const now = await get(VS, 'dynamic');
        contentName = String(now.status?.boundVolumeSnapshotContentName ?? '');
        return now.spec?.volumeSnapshotClassName === 'hostpath-default' && contentName !== '';
      },
      30_000,
      250,
    );
    const content = await get(VSC, contentName);
    t.same(content.spec?.source, { volumeHandle: 'vol-data' }, 'the content snapshots the claim’s volume');
    t.equal(content.spec?.volumeSnapshotClassName, 'hostpath-default');
    t.equal((content.spec?.volumeSnapshotRef as { uid?: string }).uid, snapshot.metadata.uid, 'and is bound to the snapshot');
    noneDenied(t);
  });

  t.test('two defaults made before the webhook: the controller fails, and a third default is denied', async (t) => {
    const { core, get, create, boundClaim } = objects;
    await boundClaim('twin-data', 'twin.csi.example.com');
    await create(VS, { metadata: { name: 'twin' }, spec: { source: { persistentVolumeClaimName: 'twin-data' } } });
    let error = '';
    await waitFor(
      'the controller reports the double default',
      async () => {
        const events = await core.listNamespacedEvent({ namespace: NS });
        const event = events.items.find(
          (e) => e.involvedObject.name === 'twin' && /default snapshot classes/.test(e.message ?? ''),
        );
        const status = (await get(VS, 'twin')).status?.error as { message?: string } | undefined;
        error = event?.message ?? status?.message ?? '';
        return error !== '';
      },
      30_000,
      250,
    );
    t.match(error, /2 default snapshot classes were found/, error);
    const third = await rejection(create(VSCLASS, klass(VSCLASS, 'twin-c', 'twin.csi.example.com', true)));
    t.match(third, /denied the request: default snapshot class: twin-a already exists for driver: twin.csi.example.com/);
    const second = await rejection(create(VSCLASS, klass(VSCLASS, 'hostpath-second', DRIVER, true)));
    t.match(
      second,
      /denied the request: default snapshot class: hostpath-default already exists for driver: hostpath.csi.k8s.io/,
    );
    noneDenied(t);
  });

  t.test('a pre-provisioned VolumeGroupSnapshotContent without a class is bound to a VolumeGroupSnapshot with one', async (t) => {
    const { get, create } = objects;
    await create(VGSCLASS, klass(VGSCLASS, 'group-static', DRIVER, false, 'Retain'));
    await create(VGSC, {
      metadata: { name: 'group-content-static' },
      spec: {
        driver: DRIVER,
        deletionPolicy: 'Retain',
        source: { groupSnapshotHandles: { volumeGroupSnapshotHandle: 'group-handle', volumeSnapshotHandles: ['s-1', 's-2'] } },
        volumeGroupSnapshotRef: { name: 'group-static', namespace: NS },
      },
    });
    const group = await create(VGS, {
      metadata: { name: 'group-static' },
      spec: { source: { volumeGroupSnapshotContentName: 'group-content-static' }, volumeGroupSnapshotClassName: 'group-static' },
    });
    await waitFor(
      'the group content bound',
      async () => {
        const content = await get(VGSC, 'group-content-static');
        return (content.spec?.volumeGroupSnapshotRef as { uid?: string }).uid === group.metadata.uid;
      },
      30_000,
      250,
    );
    const content = await get(VGSC, 'group-content-static');
    t.equal(content.spec?.volumeGroupSnapshotClassName, 'group-static', 'the controller copied the class name into the content');
    await waitFor(
      'the group snapshot names its content',
      async () => (await get(VGS, 'group-static')).status?.boundVolumeGroupSnapshotContentName === 'group-content-static',
      30_000,
      250,
    );
    noneDenied(t);
  });

  t.test('a dynamic group snapshot with a default group class: content, then member snapshots once ready', async (t) => {
    const { get, create, list, boundClaim, sidecarReportsGroup } = objects;
    await create(VGSCLASS, klass(VGSCLASS, 'group-default', DRIVER, true));
    await boundClaim('db-1', DRIVER, { app: 'db' });
    await boundClaim('db-2', DRIVER, { app: 'db' });
    await create(VGS, { metadata: { name: 'group-dynamic' }, spec: { source: { selector: { matchLabels: { app: 'db' } } } } });
    let contentName = '';
    await waitFor(
      'the controller set the class and created the group content',
      async () => {
        const group = await get(VGS, 'group-dynamic');
        contentName = String(group.status?.boundVolumeGroupSnapshotContentName ?? '');
        return group.spec?.volumeGroupSnapshotClassName === 'group-default' && contentName !== '';
      },
      30_000,
      250,
    );
    const content = await get(VGSC, contentName);
    t.same(
      [...((content.spec?.source as { volumeHandles?: string[] }).volumeHandles ?? [])].sort(),
      ['vol-db-1', 'vol-db-2'],
      "the group content lists the claims' volumes",
    );
    // The sidecar's part: the driver made the group snapshot.
    await sidecarReportsGroup(contentName, 'group-handle-dynamic', ['vol-db-1', 'vol-db-2']);
    await waitFor(
      'member snapshots and contents',
      async () => {
        const members = (await list(VS)).filter((s) => s.metadata.ownerReferences?.some((o) => o.kind === 'VolumeGroupSnapshot'));
        return members.length === 2 && members.every((m) => typeof m.status?.boundVolumeSnapshotContentName === 'string');
      },
      45_000,
      500,
    );
    const members = (await list(VS)).filter((s) => s.metadata.ownerReferences?.some((o) => o.kind === 'VolumeGroupSnapshot'));
    t.same(
      members.map((m) => m.spec?.source?.persistentVolumeClaimName).sort(),
      ['db-1', 'db-2'],
      'one member snapshot per claim',
    );
    noneDenied(t);
  });

  /** The members of a group snapshot: the snapshots it controls. */
  const membersOf = async (group: string): Promise<Obj[]> =>
    (await objects.list(VS)).filter((s) =>
      s.metadata.ownerReferences?.some((o) => o.kind === 'VolumeGroupSnapshot' && o.name === group),
    );

  /**
   * Deletes a group snapshot and plays the sidecar until the group, its content, its members and their contents are
   * gone; returns what is left after a minute.
   */
  async function deleteGroup(group: string, contentName: string, members: readonly Obj[]): Promise<string[]> {
    const { remove, gone, list, sidecarReleases } = objects;
    const memberContents = members.map((m) => String(m.status?.boundVolumeSnapshotContentName));
    await remove(VGS, group);
    const leftovers = async (): Promise<string[]> => {
      const names: string[] = [];
      if (!(await gone(VGS, group))) names.push(`VolumeGroupSnapshot ${group}`);
      if (!(await gone(VGSC, contentName))) names.push(`VolumeGroupSnapshotContent ${contentName}`);
      for (const m of members) if (!(await gone(VS, m.metadata.name))) names.push(`VolumeSnapshot ${m.metadata.name}`);
      for (const c of memberContents) if (!(await gone(VSC, c))) names.push(`VolumeSnapshotContent ${c}`);
      return names;
    };
    let left: string[] = [];
    await waitFor(
      `${group}, its content, its members and their contents gone`,
      async () => {
        for (const c of await list(VSC))
          if (c.metadata.deletionTimestamp !== undefined) await sidecarReleases(VSC, c.metadata.name);
        for (const c of await list(VGSC))
          if (c.metadata.deletionTimestamp !== undefined) await sidecarReleases(VGSC, c.metadata.name);
        left = await leftovers();
        return left.length === 0;
      },
      60_000,
      1000,
    ).catch(() => undefined);
    return left;
  }

  // Only where a "" reaches admission: the 1.20 apiserver refuses it with upstream's typed CRDs (test/e2e/kube.ts).
  if (kube.celLive) {
    t.test(
      'a dynamic group snapshot with a volume whose PV is gone: its "" member is admitted, bound, and deleted',
      async (t) => {
        const { get, create, boundClaim, sidecarReportsGroup } = objects;
        await boundClaim('web-1', DRIVER, { app: 'web' });
        await create(VGS, {
          metadata: { name: 'group-pv-gone' },
          spec: { source: { selector: { matchLabels: { app: 'web' } } } },
        });
        let contentName = '';
        await waitFor(
          'the group content',
          async () =>
            (contentName = String((await get(VGS, 'group-pv-gone')).status?.boundVolumeGroupSnapshotContentName ?? '')) !== '',
          30_000,
          250,
        );
        // The driver reports a second volume for which no PersistentVolume exists.
        await sidecarReportsGroup(contentName, 'group-handle-pv-gone', ['vol-web-1', 'vol-gone']);
        await waitFor(
          'two members, bound, and the group ready',
          async () => {
            const members = await membersOf('group-pv-gone');
            const group = await get(VGS, 'group-pv-gone');
            return (
              members.length === 2 &&
              members.every((m) => typeof m.status?.boundVolumeSnapshotContentName === 'string') &&
              group.status?.readyToUse === true
            );
          },
          45_000,
          500,
        );
        const members = await membersOf('group-pv-gone');
        t.same(
          members.map((m) => m.spec?.source?.persistentVolumeClaimName).sort(),
          ['', 'web-1'],
          'the member without a PV has ""',
        );
        noneDenied(t);

        t.same(await deleteGroup('group-pv-gone', contentName, members), [], 'nothing left behind');
        noneDenied(t);
      },
    );
  }

  // The v8.4 controller reads and writes group snapshots at v1beta2, the v8.6 controller at v1: a cluster that rolls
  // back (or runs an older controller next to the new CRDs) meets objects written at v1, through our /convert.
  if (kube.celLive) {
    t.test('the v8.4 controller takes over the group objects the v8.6 controller wrote at v1', async (t) => {
      const { get, create, boundClaim, sidecarReportsGroup } = objects;
      const atV1 = (target: typeof VGS) => ({ ...target, version: 'v1' });
      /** What a reader at v1 sees of an object, without the fields every write moves. */
      const settled = async (target: typeof VGS, name: string) => {
        const { metadata, spec, status } = await get(atV1(target), name);
        const { resourceVersion: _v, managedFields: _m, generation: _g, ...kept } = metadata as Record<string, unknown>;
        return { metadata: kept, spec, status };
      };
      const contentName = String((await get(VGS, 'group-dynamic')).status?.boundVolumeGroupSnapshotContentName);
      const members = await membersOf('group-dynamic');
      const before = { group: await settled(VGS, 'group-dynamic'), content: await settled(VGSC, contentName) };
      const memberRefs = async () =>
        Promise.all(
          members.map(async (m) => (await get(VSC, String(m.status?.boundVolumeSnapshotContentName))).spec?.volumeSnapshotRef),
        );
      const refsBefore = await memberRefs();
      noneDenied(t);
      const v84From = controllerDecisions().length;
      t.equal(members.length, 2, 'the v8.6 controller made two members');

      await controller?.stop();
      controller = startController('snapshot-controller', dir, cluster as TestCluster);
      const running = controller;
      await waitFor(
        'the v8.4 controller synced the v1 group',
        async () => running.output().includes('group-dynamic'),
        30_000,
        250,
      );
      // A dynamic group snapshot the v8.4 controller makes from the start, so that its own flow has run too.
      await boundClaim('cache-1', DRIVER, { app: 'cache' });
      await create(VGS, {
        metadata: { name: 'group-by-v84' },
        spec: { source: { selector: { matchLabels: { app: 'cache' } } } },
      });
      let newContent = '';
      await waitFor(
        'the v8.4 controller made a group content',
        async () =>
          (newContent = String((await get(VGS, 'group-by-v84')).status?.boundVolumeGroupSnapshotContentName ?? '')) !== '',
        30_000,
        250,
      );
      await sidecarReportsGroup(newContent, 'group-handle-v84', ['vol-cache-1']);
      await waitFor(
        'its member, bound, and the group ready',
        async () => {
          const made = await membersOf('group-by-v84');
          const group = await get(VGS, 'group-by-v84');
          return (
            made.length === 1 &&
            typeof made[0]?.status?.boundVolumeSnapshotContentName === 'string' &&
            group.status?.readyToUse === true
          );
        },
        45_000,
        500,
      );
      const after = { group: await settled(VGS, 'group-dynamic'), content: await settled(VGSC, contentName) };
      t.same(
        { group: after.group.spec, content: after.content },
        { group: before.group.spec, content: before.content },
        "the v1-written group's spec and its content, read at v1 after the v8.4 controller synced them, are unchanged",
      );
      t.same(await memberRefs(), refsBefore, "the members' contents are still bound to their snapshots");
      t.same(await deleteGroup('group-dynamic', contentName, members), [], 'the v8.4 controller deleted it all');
      // At its start v8.4 sometimes (about 1 run in 4 here) reports the group's content as missing and tries to clear
      // the members' contents' VolumeSnapshotRef.UID: the webhook refuses that as the immutable field it is, which keeps
      // the binding. Any other denial of its writes fails the test.
      const denied = controllerDecisions()
        .slice(v84From)
        .filter((d) => !d.allowed);
      const unbinding = (d: DecisionLine): boolean =>
        d.resource.startsWith('volumesnapshotcontents.') &&
        d.rule === 'field-immutable' &&
        String(d.reason).startsWith('Spec.VolumeSnapshotRef.UID is immutable');
      t.same(
        denied.filter((d) => !unbinding(d)),
        [],
        'no write of v8.4 was denied but its attempts to unbind a member',
      );
      t.comment(`v8.4 tried to unbind a v1-written member ${denied.length} times; the webhook kept the binding`);
      countedFrom = controllerDecisions().length;
    });
  }

  t.test('deleting snapshots and group snapshots: contents deleted or retained by policy', async (t) => {
    const { get, remove, gone, sidecarReleases } = objects;
    const dynamic = String((await get(VS, 'dynamic')).status?.boundVolumeSnapshotContentName);
    await remove(VS, 'dynamic');
    await sidecarReleases(VSC, dynamic);
    await waitFor(
      'the Delete-policy snapshot and content are gone',
      async () => (await gone(VS, 'dynamic')) && gone(VSC, dynamic),
      30_000,
      250,
    );
    await remove(VS, 'snap-with-class');
    await waitFor('the Retain-policy snapshot is gone', () => gone(VS, 'snap-with-class'), 30_000, 250);
    t.notOk(await gone(VSC, 'content-with-class'), 'its content is retained');
    await remove(VGS, 'group-static');
    await waitFor('the static group snapshot is gone', () => gone(VGS, 'group-static'), 30_000, 250);
    t.notOk(await gone(VGSC, 'group-content-static'), 'its group content is retained');
    noneDenied(t);
  });

  t.test('what the controller wrote, as the webhook saw it', async (t) => {
    const { core } = objects;
    const tally = new Map<string, number>();
    for (const d of controllerDecisions()) {
      const key = `${d.operation} ${d.resource} ${d.allowed ? 'allowed' : 'denied'}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    for (const [key, count] of [...tally].sort()) t.comment(`${key}: ${count}`);
    t.ok(tally.size > 0, 'the controller wrote through the webhook');
    const warnings = (await core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.type === 'Warning');
    for (const e of warnings)
      t.comment(`controller warning Event on ${e.involvedObject.kind}/${e.involvedObject.name}: ${e.reason}: ${e.message}`);
    noneDenied(t);
  });
}
