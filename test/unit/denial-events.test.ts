import t from 'tap';
import { reviewAdmission, type ReviewOutcome } from '../../src/admission/review.js';
import { DenialEvents, type DenialEvent, type EventResult } from '../../src/cluster/denial-events.js';
import { createLogger } from '../../src/log/logger.js';
import { memoryLog, reviewDeps } from '../helpers/review-deps.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are edited freely here
type Review = Record<string, any>;

function outcomeOf(fixture: string, change: (review: Review) => void = () => undefined): Promise<ReviewOutcome> {
  const review = readJson<{ review: Review }>(`${FIXTURES}admission/${fixture}.json`).review;
  change(review);
  return reviewAdmission(review, reviewDeps());
}

function recorder(limits = { queueMax: 10, perObjectMs: 60_000 }, fail = false) {
  const sent: DenialEvent[] = [];
  const results: EventResult[] = [];
  let now = 1_000_000;
  const log = memoryLog();
  const events = new DenialEvents(
    { create: async (e) => (fail ? Promise.reject(new Error('forbidden')) : void sent.push(e)) },
    createLogger('info', log.stream),
    limits,
    (r) => results.push(r),
    () => now,
  );
  return { events, sent, results, log, advance: (ms: number) => (now += ms) };
}

t.test('a denied UPDATE records a Warning event on the object', async (t) => {
  const { events, sent, results } = recorder();
  events.record(await outcomeOf('volumesnapshots/v1/update-pvc-changed'));
  await events.drain();
  t.equal(sent.length, 1);
  t.match(sent[0], {
    metadata: { namespace: 'team-a', name: /^snap-1\./ },
    involvedObject: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', name: 'snap-1', namespace: 'team-a' },
    reason: 'FailedValidation',
    type: 'Warning',
    message:
      'update denied by snapshot-webhook: Spec.Source.PersistentVolumeClaimName is immutable but was changed from pvc-1 to pvc-2',
  });
  t.same(results, ['sent']);
});

t.test('cluster-scoped objects get their events in default', async (t) => {
  const { events, sent } = recorder();
  events.record(await outcomeOf('volumesnapshotcontents/v1/update-volume-handle-changed'));
  await events.drain();
  t.equal(sent[0]?.metadata.namespace, 'default');
  t.equal(sent[0]?.involvedObject.namespace, undefined);
});

t.test('no event for a CREATE, an allowed UPDATE or a dry run', async (t) => {
  const { events, sent } = recorder();
  events.record(await outcomeOf('volumesnapshots/v1/create-both-sources'));
  events.record(await outcomeOf('volumesnapshots/v1/update-unchanged'));
  events.record(await outcomeOf('volumesnapshots/v1/update-pvc-changed', (r) => (r.request.dryRun = true)));
  await events.drain();
  t.equal(sent.length, 0);
  t.equal(events.pending(), 0);
});

t.test('rate-limited per object and message; bounded queue; failures only logged', async (t) => {
  const limited = recorder({ queueMax: 10, perObjectMs: 60_000 });
  const denied = await outcomeOf('volumesnapshots/v1/update-pvc-changed');
  for (let i = 0; i < 5; i++) limited.events.record(denied);
  await limited.events.drain();
  t.equal(limited.sent.length, 1, 'one event for five identical denials');
  t.same(limited.results, ['limited', 'limited', 'limited', 'limited', 'sent']);
  limited.advance(60_000);
  limited.events.record(await outcomeOf('volumesnapshots/v1/update-pvc-changed'));
  await limited.events.drain();
  t.equal(limited.sent.length, 2, 'again after the window');

  const full = recorder({ queueMax: 2, perObjectMs: 0 });
  // The first is taken off the queue at once; two more fill it; the fourth is dropped.
  const four = await Promise.all(
    [0, 1, 2, 3].map((i) =>
      outcomeOf('volumesnapshots/v1/update-pvc-changed', (r) => (r.request.object.metadata.name = `s${i}`)),
    ),
  );
  for (const outcome of four) full.events.record(outcome);
  await full.events.drain();
  t.equal(full.sent.length, 3);
  t.ok(full.results.includes('dropped'));

  const failing = recorder(undefined, true);
  failing.events.record(await outcomeOf('volumesnapshots/v1/update-pvc-changed'));
  await failing.events.drain();
  t.same(failing.results, ['failed']);
  t.match(failing.log.lines.at(-1), { msg: 'could not record a denial event', err: 'forbidden' });
});

t.test('a frozen apiserver does not hold the shutdown: drain gives up after its timeout and says so', async (t) => {
  const log = memoryLog();
  const events = new DenialEvents({ create: () => new Promise<void>(() => undefined) }, createLogger('info', log.stream));
  events.record(await outcomeOf('volumesnapshots/v1/update-pvc-changed'));
  const started = Date.now();
  await events.drain(200);
  t.ok(Date.now() - started < 2_000, 'returned');
  await new Promise((resolve) => setImmediate(resolve));
  t.match(log.lines.at(-1), { msg: 'denial events not sent before shutdown; dropped', events: 1 });
});
