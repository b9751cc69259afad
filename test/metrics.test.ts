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
