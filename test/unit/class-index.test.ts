import t from 'tap';
import { ClassIndex, RESERVATION_MS } from '../../src/classes/class-index.js';
import type { SnapshotClass } from '../../src/schemas/types.js';

const KIND = 'VolumeSnapshotClass';
const cls = (name: string, driver: string, value?: string): SnapshotClass => ({
  metadata: {
    name,
    ...(value === undefined ? {} : { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': value } }),
  },
  driver,
});

function synced(now: () => number = Date.now): ClassIndex {
  const index = new ClassIndex(now);
  index.replaceAll(KIND, []);
  return index;
}

t.test('indexes defaults by driver and follows updates and deletes', async (t) => {
  const index = synced();
  index.upsert(KIND, cls('a', 'd1', 'true'));
  index.upsert(KIND, cls('b', 'd1', 'True'));
  index.upsert(KIND, cls('c', 'd2', 'true'));
  t.same(index.defaultsFor(KIND, 'd1'), { ok: true, names: ['a'] });
  index.upsert(KIND, cls('a', 'd2', 'true'));
  t.same(index.defaultsFor(KIND, 'd1'), { ok: true, names: [] }, 'a driver change moves the default');
  t.same(index.defaultsFor(KIND, 'd2'), { ok: true, names: ['a', 'c'] });
  index.remove(KIND, 'c');
  t.same(index.defaultsFor(KIND, 'd2'), { ok: true, names: ['a'] });
  t.equal(index.exists(KIND, 'b'), true);
  t.equal(index.exists(KIND, 'zz'), false);
  t.equal(index.count(KIND), 2);
});

t.test('replaceAll drops what the fresh list no longer has', async (t) => {
  const index = synced();
  index.upsert(KIND, cls('a', 'd', 'true'));
  index.replaceAll(KIND, [cls('b', 'd', 'true')]);
  t.same(index.defaultsFor(KIND, 'd'), { ok: true, names: ['b'] });
  t.equal(index.exists(KIND, 'a'), false);
});

t.test('an admitted default counts until the watch shows it, or lapses', async (t) => {
  let now = 1_000;
  const index = synced(() => now);
  index.reserveDefault(KIND, 'new', 'd');
  t.same(index.defaultsFor(KIND, 'd'), { ok: true, names: ['new'] }, 'counted at once');
  t.same(index.defaultsFor(KIND, 'other'), { ok: true, names: [] });
  index.upsert(KIND, cls('new', 'd', 'true'));
  now += RESERVATION_MS + 1;
  t.same(index.defaultsFor(KIND, 'd'), { ok: true, names: ['new'] }, 'the watched object took over');

  index.reserveDefault(KIND, 'phantom', 'd');
  index.upsert(KIND, cls('phantom', 'd'));
  t.same(
    index.defaultsFor(KIND, 'd'),
    { ok: true, names: ['new', 'phantom'] },
    'a non-default echo does not end the reservation',
  );
  now += RESERVATION_MS;
  t.same(index.defaultsFor(KIND, 'd'), { ok: true, names: ['new'] }, 'forgotten when the object never appears as a default');
});

t.test('a kind that cannot answer says why', async (t) => {
  const index = new ClassIndex();
  t.same(index.defaultsFor(KIND, 'd'), { ok: false, reason: 'the class cache has not synced yet' });
  t.equal(index.exists(KIND, 'x'), undefined);
  index.setUnavailable(KIND, 'forbidden');
  t.equal(index.isAvailable(KIND), false);
  index.replaceAll(KIND, []);
  t.equal(index.isAvailable(KIND), true);
  index.upsert(KIND, { metadata: {} });
  t.equal(index.count(KIND), 0, 'an object without a name is ignored');
});

t.test('the claims see a deleted class as deleted, for the window and within a bound', async (t) => {
  let now = 0;
  const index = new ClassIndex(() => now);
  index.replaceAll('VolumeSnapshotClass', []);
  const cls = (name: string, uid: string) => ({
    metadata: { name, uid, resourceVersion: '1' },
    driver: 'd',
    deletionPolicy: 'Delete',
  });
  index.upsert('VolumeSnapshotClass', cls('a', 'ua') as never);
  const view = index.cacheView('VolumeSnapshotClass');
  t.notOk(view.deleted('ua'), 'present');
  index.remove('VolumeSnapshotClass', 'a');
  t.ok(view.deleted('ua'), 'deleted');
  index.upsert('VolumeSnapshotClass', cls('b', 'ub1') as never);
  index.upsert('VolumeSnapshotClass', cls('b', 'ub2') as never);
  t.ok(view.deleted('ub1'), 'replaced by another object of its name (a relist after a missed delete)');
  t.notOk(view.deleted('ub2'));
  now = 15_000;
  t.notOk(view.deleted('ua'), 'forgotten after the window');
  for (let i = 0; i < 5_000; i++) {
    index.upsert('VolumeSnapshotClass', cls(`x${i}`, `ux${i}`) as never);
    index.remove('VolumeSnapshotClass', `x${i}`);
  }
  t.ok(view.deleted('ux4999'), 'the latest is remembered');
  t.notOk(view.deleted('ux0'), 'the oldest went over the bound');
});

t.test('reservations are bounded and read per driver: a flood of forged defaults', async (t) => {
  let now = 0;
  const index = new ClassIndex(() => now);
  index.replaceAll(KIND, []);
  for (let i = 0; i < 60_000; i++) index.reserveDefault(KIND, `forged-${i}`, `driver-${i}`);
  t.equal(index.exists(KIND, 'forged-0'), false, 'the oldest went past the bound (10,000)');
  t.equal(index.exists(KIND, 'forged-59999'), true, 'the newest is held');
  t.same(index.defaultsFor(KIND, 'driver-59999'), { ok: true, names: ['forged-59999'] }, 'its driver sees it');
  t.same(index.defaultsFor(KIND, 'driver-1'), { ok: true, names: [] }, 'an evicted one no longer blocks');
  now = RESERVATION_MS;
  t.same(index.defaultsFor(KIND, 'driver-59999'), { ok: true, names: [] }, 'and every one lapses after the window');
  index.reserveDefault(KIND, 'later', 'd');
  t.equal(index.exists(KIND, 'forged-59999'), false, 'expired ones are dropped as new ones come');
});
