import t from 'tap';
import { ClassIndex } from '../../src/classes/class-index.js';
import { doubleDefaultLog } from '../../src/cluster/double-default-log.js';
import { createLogger } from '../../src/log/logger.js';
import { WebhookMetrics } from '../../src/server/metrics.js';
import { memoryLog } from '../helpers/review-deps.js';

const KIND = 'VolumeSnapshotClass';
const DEFAULT = { 'snapshot.storage.kubernetes.io/is-default-class': 'true' };
const cls = (name: string, driver: string, isDefault = true) => ({
  metadata: { name, uid: `u-${name}`, ...(isDefault ? { annotations: DEFAULT } : {}) },
  driver,
});

const WARNING =
  'more than one default VolumeSnapshotClass for a driver: new snapshots without a class fail until only one is the default';

t.test('a warning with the count at each change above one default, one line when it is back to one', async (t) => {
  const log = memoryLog();
  const index = new ClassIndex(Date.now, doubleDefaultLog(createLogger('info', log.stream)));
  index.replaceAll(KIND, [cls('a', 'd1'), cls('b', 'd1'), cls('c', 'd2')]);
  index.upsert(KIND, cls('x', 'd1'));
  index.upsert(KIND, cls('a', 'd1', false));
  index.remove(KIND, 'b');
  index.upsert(KIND, cls('c', 'd2', false));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(
    log.lines.map((l) => [l.level, l.driver, l.defaults, l.msg]),
    [
      [40, 'd1', 2, WARNING],
      [40, 'd1', 3, WARNING],
      [40, 'd1', 2, WARNING],
      [30, 'd1', 1, 'one default VolumeSnapshotClass or none for the driver again'],
    ],
    'two, three, two, then one default; other drivers none',
  );
});

t.test('three defaults for one driver and two for another: the gauge and the last log line of each agree', async (t) => {
  const log = memoryLog();
  const index = new ClassIndex(Date.now, doubleDefaultLog(createLogger('info', log.stream)));
  index.replaceAll(KIND, [cls('a', 'three'), cls('b', 'two'), cls('c', 'three')]);
  index.upsert(KIND, cls('d', 'two'));
  index.upsert(KIND, cls('e', 'three'));
  index.replaceAll('VolumeGroupSnapshotClass', []);
  await new Promise((resolve) => setImmediate(resolve));
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined, defaultCounts: (k) => index.defaultCounts(k) });
  const gauge = new Map(
    [
      ...(await metrics.registry.metrics()).matchAll(
        /^snapshot_webhook_default_classes\{kind="VolumeSnapshotClass",driver="(\w+)"\} (\d+)$/gm,
      ),
    ].map((m) => [m[1], Number(m[2])]),
  );
  const lastLine = new Map(log.lines.map((l) => [l.driver, l.defaults]));
  t.same(Object.fromEntries(gauge), { three: 3, two: 2 });
  t.same(Object.fromEntries(lastLine), Object.fromEntries(gauge), 'the log says what the gauge says');
});

t.test('the default_classes gauge: by kind and driver, at most 100 drivers, the most defaults first', async (t) => {
  const index = new ClassIndex();
  const classes = [cls('a', 'd1'), cls('b', 'd1')];
  for (let i = 0; i < 150; i++) classes.push(cls(`one-${i}`, `single-${String(i).padStart(3, '0')}`));
  index.replaceAll(KIND, classes);
  index.replaceAll('VolumeGroupSnapshotClass', []);
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined, defaultCounts: (k) => index.defaultCounts(k) });
  const text = await metrics.registry.metrics();
  const series = text.split('\n').filter((l) => l.startsWith('snapshot_webhook_default_classes{'));
  t.equal(series.length, 100, 'bounded');
  t.equal(series[0], 'snapshot_webhook_default_classes{kind="VolumeSnapshotClass",driver="d1"} 2', 'the double default first');
  index.upsert(KIND, cls('b', 'd1', false));
  t.match(await metrics.registry.metrics(), 'snapshot_webhook_default_classes{kind="VolumeSnapshotClass",driver="d1"} 1');
});
