import t from 'tap';
import { FIXTURES, filesUnder, fixtureName, readJson } from '../helpers/fixtures.js';
import { buildApp } from '../../src/server/app.js';
import { createLogger } from '../../src/log/logger.js';
import { memoryLog, reviewDeps, testApp } from '../helpers/app.js';
import { listenLoopback, postJson, send } from '../helpers/loopback.js';
import { admissionReview, SNAPSHOT_V1 } from '../helpers/review.mjs';

interface ProtocolFixture {
  description: string;
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body?: string | null;
  bodyBase64?: string;
  bodyRepeat?: { prefix: string; char: string; size: number; suffix: string };
  expect: { status: number; body: string };
}

function payloadOf(f: ProtocolFixture): string | Buffer | undefined {
  if (f.bodyBase64 !== undefined) return Buffer.from(f.bodyBase64, 'base64');
  if (f.bodyRepeat !== undefined) {
    const { prefix, char, size, suffix } = f.bodyRepeat;
    return prefix + char.repeat(size - prefix.length - suffix.length) + suffix;
  }
  return f.body ?? undefined;
}

const { app, log } = testApp();
t.teardown(() => app.close());
const port = await listenLoopback(app);

for (const file of filesUnder(`${FIXTURES}protocol`)) {
  const fixture = readJson<ProtocolFixture>(file);
  t.test(`${fixtureName(file)}: ${fixture.description}`, async (t) => {
    const payload = payloadOf(fixture);
    const response = await send(port, {
      method: fixture.method,
      url: fixture.url,
      headers: fixture.headers,
      ...(payload === undefined ? {} : { payload }),
    });
    t.equal(response.status, fixture.expect.status, 'status');
    t.equal(response.body, fixture.expect.body, 'exact body');
    if (response.status !== 200 || !fixture.url.startsWith('/validate')) return;
    t.match(response.headers['content-type'], /^application\/json/);
  });
}

t.test('one log line per decision, without the object', async (t) => {
  const before = log.lines.length;
  const body = readJson<ProtocolFixture>(`${FIXTURES}protocol/v1beta1-denied.json`).body as string;
  await postJson(port, body);
  const lines = log.lines.slice(before);
  t.equal(lines.length, 1);
  t.match(lines[0], {
    uid: 'b-2',
    kind: 'VolumeSnapshot',
    operation: 'CREATE',
    allowed: false,
    rule: 'source-exactly-one',
    reason: /one of Spec.Source/,
    msg: 'denied',
  });
  t.type(lines[0]?.ms, 'number');
  t.notOk(JSON.stringify(lines[0]).includes('persistentVolumeClaimName'), 'no object body at info level');
});

t.test('readyz reports why it is not ready', async (t) => {
  const { app: notReady } = testApp({
    readiness: { checks: () => [{ name: 'test', problems: ['VolumeSnapshotClass cache has not synced yet'] }] },
  });
  const response = await notReady.inject({ method: 'GET', url: '/readyz' });
  t.equal(response.statusCode, 503);
  t.equal(response.body, 'not ready: VolumeSnapshotClass cache has not synced yet');
  const health = await notReady.inject({ method: 'GET', url: '/healthz' });
  t.equal(health.statusCode, 200, 'liveness does not depend on readiness');
  await notReady.close();
});

t.test('readyz?verbose names each check and the one that fails', async (t) => {
  const checks = [
    { name: 'listening', problems: [] },
    {
      name: 'classes',
      problems: ['forbidden to list volumesnapshotclasses', 'VolumeGroupSnapshotClass cache has not synced yet'],
    },
  ];
  const { app } = testApp({ readiness: { checks: () => checks } });
  t.teardown(() => app.close());
  const failing = await app.inject({ method: 'GET', url: '/readyz?verbose' });
  t.equal(failing.statusCode, 503);
  t.equal(
    failing.body,
    '[+]listening ok\n[-]classes failed: forbidden to list volumesnapshotclasses; VolumeGroupSnapshotClass cache has not synced yet\nreadyz check failed\n',
  );
  checks[1] = { name: 'classes', problems: [] };
  const passing = await app.inject({ method: 'GET', url: '/readyz?verbose=1' });
  t.same([passing.statusCode, passing.body], [200, '[+]listening ok\n[+]classes ok\nreadyz check passed\n']);
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).body, 'ok', 'without verbose, as before');
});

t.test('an informational check is shown by readyz?verbose and never makes the server unready', async (t) => {
  const checks = [
    { name: 'classes', problems: [] },
    { name: 'permissions', informational: true, problems: ['cannot list volumesnapshotclasses.snapshot.storage.k8s.io: 503'] },
  ];
  const { app } = testApp({ readiness: { checks: () => checks } });
  t.teardown(() => app.close());
  const verbose = await app.inject({ method: 'GET', url: '/readyz?verbose' });
  t.same(
    [verbose.statusCode, verbose.body],
    [
      200,
      '[+]classes ok\n[-]permissions failed (not counted: still ready): cannot list volumesnapshotclasses.snapshot.storage.k8s.io: 503\nreadyz check passed\n',
    ],
  );
  const plain = await app.inject({ method: 'GET', url: '/readyz' });
  t.same([plain.statusCode, plain.body], [200, 'ok']);
});

t.test('while shutting down every answer says Connection: close, admission and probes alike', async (t) => {
  const log = memoryLog();
  const closingApp = buildApp({
    review: reviewDeps(),
    logger: createLogger('info', log.stream),
    readiness: { checks: () => [{ name: 'test', problems: ['shutting down'] }] },
    closing: () => true,
  });
  t.teardown(() => closingApp.close());
  const body = readJson<ProtocolFixture>(`${FIXTURES}protocol/v1beta1-denied.json`).body as string;
  const answers = [
    await closingApp.inject({ method: 'POST', url: '/validate', headers: { 'content-type': 'application/json' }, payload: body }),
    await closingApp.inject({ method: 'GET', url: '/readyz' }),
    await closingApp.inject({ method: 'GET', url: '/healthz' }),
    await closingApp.inject({ method: 'GET', url: '/nowhere' }),
  ];
  t.same(
    answers.map((a) => [a.statusCode, a.headers.connection]),
    [
      [200, 'close'],
      [503, 'close'],
      [200, 'close'],
      [404, 'close'],
    ],
  );
});

t.test('answers and log lines echo at most 256 characters of any value the request controls', async (t) => {
  const log = memoryLog();
  const small = buildApp({
    review: reviewDeps(),
    logger: createLogger('info', log.stream),
    readiness: { checks: () => [{ name: 'test', problems: [] }] },
  });
  t.teardown(() => small.close());
  const huge = 'x'.repeat(1_500_000);
  const review = admissionReview(SNAPSHOT_V1, {
    uid: 'long-values',
    name: huge,
    namespace: 'team-a',
    userInfo: { username: huge },
    object: {
      metadata: { name: 'snap', namespace: 'team-a' },
      spec: { source: { persistentVolumeClaimName: huge, volumeSnapshotContentName: huge } },
    },
  });
  const answer = await small.inject({
    method: 'POST',
    url: '/validate',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(review),
  });
  t.equal(answer.statusCode, 200);
  t.ok(answer.body.length < 2_000, `the answer is ${answer.body.length} bytes`);
  t.match(
    JSON.parse(answer.body).response.status.message,
    /^only one of Spec\.Source\.PersistentVolumeClaimName = x{256}\.\.\.\(1500000 characters\) and /,
  );
  // Decision lines are written at the end of the event loop's turn (src/server/decision-records.ts).
  await new Promise((resolve) => setImmediate(resolve));
  const decision = log.lines.at(-1);
  t.equal(decision?.uid, 'long-values', 'the decision line is the last line');
  const line = JSON.stringify(decision);
  t.ok(line.length < 3_000, `the decision line is ${line.length} bytes`);
  const longUid = await small.inject({
    method: 'POST',
    url: '/validate',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ ...review, request: { ...review.request, uid: 'u'.repeat(300) } }),
  });
  t.same(
    [longUid.statusCode, JSON.parse(longUid.body).message],
    [400, 'malformed AdmissionReview: /request/uid must NOT have more than 256 characters'],
  );
});
