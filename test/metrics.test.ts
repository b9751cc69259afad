import { request } from 'node:http';
import { Histogram, Registry } from 'prom-client';
import t from 'tap';
import { buildApp } from '../src/server/app.js';
import { WebhookMetrics } from '../src/server/metrics.js';
import { createLogger } from '../src/log/logger.js';
import { memoryLog, reviewDeps } from './helpers/app.js';
import { FIXTURES, readJson } from './helpers/fixtures.js';
import { listenLoopback, postJson } from './helpers/loopback.js';

t.test('GET /metrics exposes requests, decisions, findings, latency, cache and certificate state', async (t) => {
  const metrics = new WebhookMetrics({
    cache: { status: () => [{ kind: 'VolumeSnapshotClass', synced: true, objects: 3, restarts: 2, secondsSinceLastEvent: 4.5 }] },
    certificateSecondsLeft: () => 86_400,
  });
  const app = buildApp({
    review: reviewDeps(),
    logger: createLogger('info', memoryLog().stream),
    readiness: { notReadyReasons: () => [] },
    metrics,
  });
  t.teardown(() => app.close());
  const port = await listenLoopback(app);
  const post = (fixture: string) =>
    postJson(port, JSON.stringify(readJson<{ review: unknown }>(`${FIXTURES}admission/${fixture}.json`).review));
  await post('volumesnapshotclasses/v1/create-second-default');
  await post('volumesnapshots/v1/create-pvc-source');
  await post('volumesnapshots/v1/create-unknown-class');
  await postJson(port, '{');
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const expected = [
    'snapshot_webhook_admission_requests_total{group="snapshot.storage.k8s.io",resource="volumesnapshotclasses",operation="CREATE",decision="denied"} 1',
    'snapshot_webhook_admission_requests_total{group="snapshot.storage.k8s.io",resource="volumesnapshots",operation="CREATE",decision="allowed"} 2',
    'snapshot_webhook_rule_findings_total{rule="default-class-unique",effect="denied"} 1',
    'snapshot_webhook_rule_findings_total{rule="class-not-found",effect="warning"} 1',
    'snapshot_webhook_malformed_requests_total{code="SW_NOT_JSON"} 1',
    'snapshot_webhook_admission_duration_seconds_count{resource="volumesnapshots"} 2',
    'snapshot_webhook_admission_in_flight_requests 0',
    'snapshot_webhook_class_cache_synced{kind="VolumeSnapshotClass"} 1',
    'snapshot_webhook_class_cache_objects{kind="VolumeSnapshotClass"} 3',
    'snapshot_webhook_class_cache_seconds_since_last_event{kind="VolumeSnapshotClass"} 4.5',
    'snapshot_webhook_informer_restarts_total{kind="VolumeSnapshotClass"} 2',
    'snapshot_webhook_serving_certificate_expiry_seconds 86400',
  ];
  for (const line of expected) t.ok(text.split('\n').includes(line), line);
  t.match(text, /^snapshot_webhook_process_resident_memory_bytes \d+/m, 'Node process metrics');
});

t.test('the duration histogram reads as prom-client’s own Histogram given the same observations', async (t) => {
  const ours = new WebhookMetrics({ certificateSecondsLeft: () => undefined });
  const reference = new Registry();
  const histogram = new Histogram({
    name: 'snapshot_webhook_admission_duration_seconds',
    help: 'Time from the whole request body to the answer (parsing, rules, decision), in seconds.',
    labelNames: ['resource'],
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
    registers: [reference],
  });
  const outcome = (resource: string) =>
    ({
      request: { resource: { group: 'snapshot.storage.k8s.io', version: 'v1', resource }, operation: 'CREATE' },
      decision: { allowed: true, softened: false, warnings: [], denial: undefined },
      evaluation: { findings: [] },
    }) as unknown as Parameters<WebhookMetrics['observe']>[0];
  // Values on and between the bounds, below the first and above the last.
  const seen: [string, number][] = [
    ['volumesnapshots', 0.01],
    ['volumesnapshots', 0.00003],
    ['volumesnapshots', 0.00005],
    ['volumesnapshotcontents', 0.3],
    ['volumesnapshots', 2],
    ['volumesnapshotclasses', 0.0007],
  ];
  for (const [resource, seconds] of seen) {
    ours.observe(outcome(resource), seconds * 1000);
    histogram.observe({ resource }, seconds);
  }
  const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('snapshot_webhook_admission_duration_seconds'));
  const expected = lines(await reference.metrics());
  t.equal(expected.length, 3 * 14, 'three series of 12 buckets (11 bounds and +Inf), sum and count');
  t.same(lines(await ours.text()), expected);
  // JSON (not served, but part of the registry's interface): the same values, without prom-client's exemplars.
  const json = async (registry: Registry) => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'snapshot_webhook_admission_duration_seconds');
    return metric?.values.map((v) => ({
      labels: v.labels,
      value: v.value,
      metricName: (v as { metricName?: string }).metricName,
    }));
  };
  t.same(await json(ours.registry), await json(reference), 'and as JSON');
  ours.registry.resetMetrics();
  t.same(lines(await ours.text()), [], 'reset empties it');
});

t.test('in flight counts a request from its headers to its answer', async (t) => {
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined });
  const app = buildApp({
    review: reviewDeps(),
    logger: createLogger('warn', memoryLog().stream),
    readiness: { notReadyReasons: () => [] },
    metrics,
  });
  t.teardown(() => app.close());
  const port = await listenLoopback(app);
  const body = JSON.stringify(
    readJson<{ review: unknown }>(`${FIXTURES}admission/volumesnapshots/v1/create-pvc-source.json`).review,
  );
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/validate',
    headers: { 'content-type': 'application/json' },
  });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 10));
  for (let i = 0; i < 200 && metrics.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(metrics.inFlight, 1, 'the body is still coming');
  t.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^snapshot_webhook_admission_in_flight_requests 1$/m);
  req.end(body.slice(10));
  t.equal(await answered, 200);
  for (let i = 0; i < 200 && metrics.inFlight !== 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(metrics.inFlight, 0, 'answered');
  const gone = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/validate',
    headers: { 'content-type': 'application/json' },
  });
  gone.on('error', () => undefined);
  gone.write('{"half":');
  for (let i = 0; i < 200 && metrics.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 5));
  gone.destroy();
  for (let i = 0; i < 200 && metrics.inFlight !== 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(metrics.inFlight, 0, 'a client that went away mid-body is not counted any more');
});
