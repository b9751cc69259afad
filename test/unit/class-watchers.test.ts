import t from 'tap';
import { ApiserverError } from '../../src/cluster/apiserver-error.js';
import { ClassIndex } from '../../src/classes/class-index.js';
import { ClassWatchers } from '../../src/cluster/class-watchers.js';
import { createLogger } from '../../src/log/logger.js';
import type { SnapshotClass } from '../../src/schemas/types.js';
import { memoryLog } from '../helpers/review-deps.js';
import { FakeCluster, tick } from '../helpers/fake-cluster.js';

const FAST = {
  rediscoverMs: 60_000,
  backoffBaseMs: 5,
  backoffMaxMs: 20,
  // Liveness runs only when a test calls checkLiveness().
  probeEveryMs: 3_600_000,
  probeTimeoutMs: 100,
  silenceMs: 90_000,
  staleUnreadyMs: 30_000,
};
const cls = (name: string, driver: string, isDefault: boolean): SnapshotClass => ({
  metadata: { name, ...(isDefault ? { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } } : {}) },
  driver,
});

function setup(cluster = new FakeCluster()) {
  const log = memoryLog();
  const index = new ClassIndex();
  const watchers = new ClassWatchers(index, cluster, createLogger('info', log.stream), FAST);
  return { cluster, index, watchers, log };
}

t.test('not ready until every served kind has listed once', async (t) => {
  const { cluster, index, watchers } = setup();
  await watchers.start();
  t.teardown(() => watchers.stop());
  t.same(watchers.notReadyReasons(), [
    'VolumeSnapshotClass cache has not synced yet',
    'VolumeGroupSnapshotClass cache has not synced yet',
  ]);
  t.same(index.defaultsFor('VolumeSnapshotClass', 'd'), { ok: false, reason: 'the class cache has not synced yet' });
  cluster.latest('volumesnapshotclasses').handlers.listed([cls('a', 'd', true), cls('b', 'd', false)]);
  cluster.latest('volumegroupsnapshotclasses').handlers.listed([]);
  t.same(watchers.notReadyReasons(), []);
  t.same(index.defaultsFor('VolumeSnapshotClass', 'd'), { ok: true, names: ['a'] });
  t.equal(cluster.latest('volumesnapshotclasses').resource.version, 'v1', 'watches the preferred version');
});

t.test('a cluster without the group CRDs still serves snapshots, with one log line', async (t) => {
  const cluster = new FakeCluster();
  cluster.groups.delete('groupsnapshot.storage.k8s.io');
  const { index, watchers, log } = setup(cluster);
  await watchers.start();
  t.teardown(() => watchers.stop());
  cluster.latest('volumesnapshotclasses').handlers.listed([]);
  t.same(watchers.notReadyReasons(), [], 'ready without the group kinds');
  t.same(index.defaultsFor('VolumeGroupSnapshotClass', 'd'), {
    ok: false,
    reason: 'the cluster does not serve VolumeGroupSnapshotClass (its CRD is not installed)',
  });
  await watchers.discover();
  t.equal(log.lines.filter((l) => String(l.msg).includes('does not serve')).length, 1, 'said once, not on every rediscovery');

  cluster.groups.set('groupsnapshot.storage.k8s.io', 'v1beta2');
  await watchers.discover();
  t.equal(cluster.latest('volumegroupsnapshotclasses').resource.version, 'v1beta2', 'a CRD installed later is picked up');
  t.same(watchers.notReadyReasons(), [], 'a kind found later does not make a ready server unready');
});

t.test('a failed watch keeps the last good cache and restarts with backoff', async (t) => {
  const { cluster, index, watchers, log } = setup();
  await watchers.start();
  t.teardown(() => watchers.stop());
  const first = cluster.latest('volumesnapshotclasses');
  first.handlers.listed([cls('a', 'd', true)]);
  first.handlers.failed(new ApiserverError('connection reset', undefined));
  t.ok(first.stopped, 'the failed informer is stopped');
  t.same(index.defaultsFor('VolumeSnapshotClass', 'd'), { ok: true, names: ['a'] }, 'still answers from the last list');
  t.match(log.lines.at(-1), { msg: 'VolumeSnapshotClass watch failed; serving the last good cache and restarting' });
  await tick(40);
  const second = cluster.latest('volumesnapshotclasses');
  t.not(second, first, 'a new informer was started');
  t.ok(second.started);
  first.handlers.upserted(cls('ghost', 'd', true));
  t.same(index.defaultsFor('VolumeSnapshotClass', 'd'), { ok: true, names: ['a'] }, 'events of a stopped informer are ignored');
  second.handlers.listed([cls('a', 'd', false), cls('c', 'd', true)]);
  t.same(index.defaultsFor('VolumeSnapshotClass', 'd'), { ok: true, names: ['c'] }, 'the resync replaced the contents');
  const status = watchers.status().find((s) => s.kind === 'VolumeSnapshotClass');
  t.match(status, { state: 'synced', restarts: 1, objects: 2 });
  t.match(log.lines.at(-1), { msg: 'VolumeSnapshotClass watch resumed' });
});

t.test('a list that fails before the first sync says there is no cache yet, and the server stays unready', async (t) => {
  const { cluster, watchers, log } = setup();
  await watchers.start();
  t.teardown(() => watchers.stop());
  cluster.latest('volumesnapshotclasses').handlers.failed(new ApiserverError('storage is (re)initializing', 429));
  t.match(log.lines.at(-1), {
    level: 40,
    status: 429,
    msg: 'VolumeSnapshotClass list failed before its first sync; not ready until it succeeds, retrying',
  });
  t.match(watchers.notReadyReasons(), ['VolumeSnapshotClass cache has not synced yet']);
});

t.test('a watch whose start rejects is restarted too', async (t) => {
  const cluster = new FakeCluster();
  let fail = true;
  const original = cluster.watchClasses.bind(cluster);
  cluster.watchClasses = (resource, handlers) => {
    const watch = original(resource, handlers);
    if (fail && resource.plural === 'volumesnapshotclasses') {
      fail = false;
      watch.start = () => Promise.reject(new ApiserverError('boom', 500));
    }
    return watch;
  };
  const { watchers } = setup(cluster);
  await watchers.start();
  t.teardown(() => watchers.stop());
  await tick(40);
  t.equal(cluster.watches.filter((w) => w.resource.plural === 'volumesnapshotclasses').length, 2);
});

t.test('forbidden by RBAC: a clear error, the kind unavailable, readiness not blocked', async (t) => {
  const { cluster, index, watchers, log } = setup();
  await watchers.start();
  t.teardown(() => watchers.stop());
  cluster.latest('volumesnapshotclasses').handlers.listed([]);
  cluster.latest('volumegroupsnapshotclasses').handlers.failed(new ApiserverError('Forbidden', 403, 'Forbidden'));
  t.same(watchers.notReadyReasons(), []);
  t.same(index.defaultsFor('VolumeGroupSnapshotClass', 'd'), {
    ok: false,
    reason: 'the webhook may not list volumegroupsnapshotclasses (RBAC)',
  });
  t.match(log.lines.at(-1), { level: 50, msg: /forbidden to list volumegroupsnapshotclasses: grant get, list and watch/ });
});

t.test('a deleted CRD (404) sends the watcher back to discovery', async (t) => {
  const { cluster, index, watchers } = setup();
  await watchers.start();
  t.teardown(() => watchers.stop());
  cluster.latest('volumegroupsnapshotclasses').handlers.listed([]);
  cluster.groups.delete('groupsnapshot.storage.k8s.io');
  const before = cluster.discoveries;
  cluster.latest('volumegroupsnapshotclasses').handlers.failed(new ApiserverError('not found', 404, 'NotFound'));
  await tick(40);
  t.ok(cluster.discoveries > before, 'discovered again');
  t.match(index.defaultsFor('VolumeGroupSnapshotClass', 'd'), { ok: false, reason: /does not serve/ });
});

t.test('an unreachable apiserver at start: not ready, no crash, retried', async (t) => {
  const cluster = new FakeCluster();
  cluster.discoveryError = new Error('connect ECONNREFUSED 127.0.0.1:6443');
  const { index, watchers } = setup(cluster);
  await watchers.start();
  t.teardown(() => watchers.stop());
  t.same(watchers.notReadyReasons(), ["cannot discover the cluster's API groups yet: connect ECONNREFUSED 127.0.0.1:6443"]);
  t.match(index.defaultsFor('VolumeSnapshotClass', 'd'), { ok: false, reason: /cannot reach the cluster/ });
  cluster.discoveryError = undefined;
  await tick(40);
  t.ok(cluster.watches.length >= 1, 'watches started once the apiserver answered');
});

t.test('stop ends every watch and timer', async (t) => {
  const { cluster, watchers } = setup();
  await watchers.start();
  cluster.latest('volumesnapshotclasses').handlers.failed(new Error('x'));
  watchers.stop();
  const count = cluster.watches.length;
  await tick(40);
  t.equal(cluster.watches.length, count, 'no restart after stop');
  t.ok(cluster.watches.every((w) => w.stopped));
});

t.test('a frozen apiserver: the probe fails, the kind is not synced and restarted, and after 30 s not ready', async (t) => {
  let now = 1_000_000;
  const cluster = new FakeCluster();
  const log = memoryLog();
  const watchers = new ClassWatchers(new ClassIndex(), cluster, createLogger('info', log.stream), FAST, () => now);
  await watchers.start();
  t.teardown(() => watchers.stop());
  cluster.latest('volumesnapshotclasses').handlers.listed([]);
  cluster.latest('volumegroupsnapshotclasses').handlers.listed([]);
  watchers.checkLiveness();
  await tick(5);
  t.equal(cluster.probes, 2, 'each synced kind is asked');
  t.ok(watchers.isHealthy('VolumeSnapshotClass'));
  cluster.probeError = new Error('GET /apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses?limit=1: timed out');
  watchers.checkLiveness();
  await tick(5);
  t.notOk(watchers.isHealthy('VolumeSnapshotClass'), 'not healthy: claims deny with 503');
  t.match(watchers.status()[0], { kind: 'VolumeSnapshotClass', synced: false, state: 'broken' });
  t.same(watchers.notReadyReasons(), [], 'ready for a while: a blip does not flap readiness');
  now += 30_000;
  t.match(watchers.notReadyReasons(), [/^VolumeSnapshotClass cache is stale for 30 s: GET .*timed out$/]);
  cluster.probeError = undefined;
  await tick(50);
  cluster.latest('volumesnapshotclasses').handlers.listed([]);
  cluster.latest('volumegroupsnapshotclasses').handlers.listed([]);
  t.same(watchers.notReadyReasons(), [], 'ready again once it lists');
  t.ok(watchers.isHealthy('VolumeSnapshotClass'));
});

t.test('a silent watch is restarted; bookmarks and reconnects count as signs of life', async (t) => {
  let now = 1_000_000;
  const cluster = new FakeCluster();
  const watchers = new ClassWatchers(new ClassIndex(), cluster, createLogger('info', memoryLog().stream), FAST, () => now);
  await watchers.start();
  t.teardown(() => watchers.stop());
  const first = cluster.latest('volumesnapshotclasses');
  first.handlers.listed([]);
  cluster.latest('volumegroupsnapshotclasses').handlers.listed([]);
  now += 80_000;
  first.handlers.alive?.();
  now += 80_000;
  watchers.checkLiveness();
  t.ok(watchers.isHealthy('VolumeSnapshotClass'), 'a bookmark 80 s ago keeps it alive');
  now += 11_000;
  watchers.checkLiveness();
  t.notOk(watchers.isHealthy('VolumeSnapshotClass'), 'silent for 91 s: broken');
  t.ok(first.stopped, 'the old watch is stopped');
  await tick(50);
  t.not(cluster.latest('volumesnapshotclasses'), first, 'and a new one started');
});
