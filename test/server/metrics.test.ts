import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t, { type Test } from 'tap';
import { buildApp } from '../../src/server/app.js';
import { WebhookMetrics } from '../../src/server/metrics.js';
import { createLogger } from '../../src/log/logger.js';
import { memoryLog, reviewDeps } from '../helpers/app.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';
import { listenLoopback, postJson } from '../helpers/loopback.js';
import { admissionReview } from '../helpers/review.mjs';

/** The in-flight gauge's value now. */
async function inFlight(metrics: WebhookMetrics): Promise<number> {
  return (await metrics.inFlight.get()).values[0]?.value ?? 0;
}

/** A loopback server with these metrics, closed when the test ends. */
async function listening(t: Test, metrics: WebhookMetrics, level: 'info' | 'warn', keepLog = true) {
  // Info lines are written either way; kept only when a test reads them (10,000 kept lines are heap of their own).
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  const app = buildApp({
    review: reviewDeps(),
    logger: createLogger(level, keepLog ? memoryLog().stream : discard),
    readiness: { checks: () => [{ name: 'test', problems: [] }] },
    metrics,
  });
  t.teardown(() => app.close());
  return { app, port: await listenLoopback(app) };
}

t.test('GET /metrics exposes requests, decisions, findings, latency, cache and certificate state', async (t) => {
  const metrics = new WebhookMetrics({
    cache: { status: () => [{ kind: 'VolumeSnapshotClass', synced: true, objects: 3, restarts: 2, secondsSinceLastEvent: 4.5 }] },
    certificateSecondsLeft: () => 86_400,
  });
  const { app, port } = await listening(t, metrics, 'info');
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

/** Heap in use after a full collection (gc exposed for this measurement only). */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

t.test('label values come from fixed sets: 10,000 hostile values add no series and no heap', async (t) => {
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined, logLinesDropped: () => 7 });
  const { app, port } = await listening(t, metrics, 'info', false);
  // Every label a request names is hostile: group, version, kind, resource and operation.
  const review = (i: number) => {
    const built = admissionReview(
      { group: `group-${i}.example.com`, version: `v${i}`, kind: `K${i}`, resource: `r${i}`.padEnd(2000, 'x') },
      { uid: `u-${i}`, operation: i % 2 === 0 ? 'CREATE' : `OP-${i}`, userInfo: { username: `someone-${i}` }, object: {} },
    );
    return { ...built, request: { ...built.request, kind: { group: `k${i}`, version: `v${i}`, kind: `K${i}` } } };
  };
  const seriesCount = async (): Promise<number> =>
    (await app.inject({ method: 'GET', url: '/metrics' })).body
      .split('\n')
      .filter((l) => /^snapshot_webhook_(?!process|nodejs)/.test(l)).length;
  for (let i = 0; i < 100; i++) await postJson(port, JSON.stringify(review(i)));
  const seriesBefore = await seriesCount();
  const heapBefore = heapAfterGc();
  for (let i = 100; i < 10_100; i++) await postJson(port, JSON.stringify(review(i)));
  const heapGrowth = heapAfterGc() - heapBefore;
  t.equal(await seriesCount(), seriesBefore, 'the same series after 10,000 distinct groups, resources, versions and operations');
  t.ok(heapGrowth < 4 * 2 ** 20, `heap grew ${(heapGrowth / 2 ** 20).toFixed(2)} MiB`);
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const series = text.split('\n').filter((l) => l.startsWith('snapshot_webhook_admission_requests_total{'));
  t.same(series.sort(), [
    'snapshot_webhook_admission_requests_total{group="other",resource="other",operation="CREATE",decision="allowed"} 5050',
    'snapshot_webhook_admission_requests_total{group="other",resource="other",operation="other",decision="allowed"} 5050',
  ]);
  t.equal(text.split('\n').filter((l) => l.startsWith('snapshot_webhook_admission_duration_seconds_count{')).length, 1);
  t.ok(text.split('\n').includes('snapshot_webhook_log_lines_dropped_total 7'), 'dropped log lines');
});

t.test('in flight counts a request from its headers to its answer', async (t) => {
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined });
  const { app, port } = await listening(t, metrics, 'warn');
  const body = JSON.stringify(
    readJson<{ review: unknown }>(`${FIXTURES}admission/volumesnapshots/v1/create-pvc-source.json`).review,
  );
  const post = () =>
    request({ host: '127.0.0.1', port, method: 'POST', path: '/validate', headers: { 'content-type': 'application/json' } });
  const req = post();
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 10));
  for (let i = 0; i < 200 && (await inFlight(metrics)) === 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(await inFlight(metrics), 1, 'the body is still coming');
  t.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^snapshot_webhook_admission_in_flight_requests 1$/m);
  req.end(body.slice(10));
  t.equal(await answered, 200);
  for (let i = 0; i < 200 && (await inFlight(metrics)) !== 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(await inFlight(metrics), 0, 'answered');
  const gone = post();
  gone.on('error', () => undefined);
  gone.write('{"half":');
  for (let i = 0; i < 200 && (await inFlight(metrics)) === 0; i++) await new Promise((r) => setTimeout(r, 5));
  gone.destroy();
  for (let i = 0; i < 200 && (await inFlight(metrics)) !== 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(await inFlight(metrics), 0, 'a client that went away mid-body is not counted any more');
});

t.test('docs/metrics.md lists exactly the metrics the server registers', async (t) => {
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined });
  const registered = (await metrics.registry.getMetricsAsJSON())
    .map((m) => m.name)
    .filter((name) => !/^snapshot_webhook_(process|nodejs)_/.test(name))
    .sort();
  const documented = [...readFileSync('docs/metrics.md', 'utf8').matchAll(/^\| `(snapshot_webhook_[a-z_]+)`/gm)]
    .map((m) => m[1] as string)
    .sort();
  t.same(documented, registered);
});

t.test("the Grafana dashboard's every query names only metrics the server exports, and covers what it must", async (t) => {
  const metrics = new WebhookMetrics({ certificateSecondsLeft: () => undefined });
  const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
  const dashboard = readJson<{ panels: { title: string; targets: { expr: string }[] }[] }>(
    'manifests/components/monitoring/dashboard.json',
  );
  const named = new Set<string>();
  for (const panel of dashboard.panels) {
    t.ok(panel.targets.length > 0, `${panel.title}: has a query`);
    for (const { expr } of panel.targets) {
      const names = [...expr.matchAll(/\bsnapshot_webhook_[a-z_]+/g)].map(([n]) => n.replace(/_(bucket|sum|count)$/, ''));
      t.ok(names.length > 0, `${panel.title}: ${expr} names a metric`);
      for (const name of names) {
        t.ok(exported.has(name), `${panel.title}: ${name} is exported`);
        named.add(name);
      }
    }
  }
  for (const needed of [
    'snapshot_webhook_admission_requests_total',
    'snapshot_webhook_admission_duration_seconds',
    'snapshot_webhook_default_classes',
    'snapshot_webhook_conversions_total',
    'snapshot_webhook_class_cache_synced',
    'snapshot_webhook_informer_restarts_total',
    'snapshot_webhook_tls_handshake_failures_total',
  ])
    t.ok(named.has(needed), `the dashboard shows ${needed}`);
});
