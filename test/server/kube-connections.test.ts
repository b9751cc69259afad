// kubeExchange keeps its connections to the apiserver open: rounds of calls (the permission reviews and watch
// probes every 10 s) reuse a few TLS connections instead of a handshake each, and a kubeconfig with a proxy still
// goes through the proxy. Real HTTPS on loopback.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import t, { type Test } from 'tap';
import { makeCa, makeServingCert } from '../../src/certs/make-certs.js';
import { KUBE_CONNECTIONS, KUBE_IDLE_MS, kubeExchange } from '../../src/cluster/kube-http.js';
import { WATCH_AGAIN_MAX_MS, WATCH_SILENCE_MS, WATCH_TIMEOUT_S, clientNodeApi } from '../../src/cluster/client-node-api.js';
import { HttpsWatch } from '../../src/cluster/kube-watch.js';
import { BOUNDS } from '../../src/limits/bounds.js';

const ca = await makeCa('kube-connections-test-ca', 1);
const serving = await makeServingCert(ca, {
  commonName: 'apiserver',
  dnsNames: ['localhost'],
  ipAddresses: ['127.0.0.1'],
  days: 1,
});

async function listen(server: ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A watch: two events in one chunk, one split over two, a line that is no event, then the server-side timeout. */
function things(res: ServerResponse): void {
  res.write(
    '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODIFIED","object":{"metadata":{"name":"a"}}}\nnot json\n{"type":"BOOK',
  );
  setTimeout(() => res.end('MARK","object":{"metadata":{"resourceVersion":"7"}}}\n'), 10);
}

/** The stand-in's watches by path, after their 200 (the other paths are `things`). */
const WATCHES: Record<string, (res: ServerResponse) => void> = {
  // A watch that gets no answer.
  '/apis/g/v1/unanswered': () => undefined,
  // A watch that answers, then says nothing.
  '/apis/g/v1/silent': (res) => res.flushHeaders(),
  '/apis/g/v1/huge': (res) => res.write(`{"type":"ADDED","object":"${'x'.repeat(BOUNDS.watchLineChars)}`),
  // A watch that lives a while: an event now, another after 400 ms, then the server-side timeout.
  '/apis/g/v1/slow': (res) => {
    res.write('{"type":"ADDED","object":{"metadata":{"name":"first"}}}\n');
    setTimeout(() => res.end('{"type":"ADDED","object":{"metadata":{"name":"second"}}}\n'), 400);
  },
  // A kind with no events: each watch ends at once, as at its server-side timeout.
  '/apis/g/v1/quiet': (res) => res.end(),
};

/** An apiserver stand-in that answers `{}` and counts the TLS connections it accepted and the quiet kind's watches. */
async function apiserver(t: Test): Promise<{ port: number; connections: () => number; quietWatches: () => number }> {
  let connections = 0;
  let quietWatches = 0;
  const served = new WeakSet<object>();
  const server = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    if (req.url === '/frozen') return; // never answers, as a frozen apiserver
    const path = req.url?.split('?')[0] ?? '';
    const reused = served.has(req.socket);
    served.add(req.socket);
    // The apiserver closing a connection as a request arrives: a kept one (as when it closed an idle connection
    // just then), or any.
    if ((reused && path === '/apis/g/v1/closed-when-kept') || path === '/apis/g/v1/closed') return void req.socket.destroy();
    if (path === '/apis/g/v1/gone') return void res.writeHead(410, 'Gone').end('{}');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!req.url?.includes('watch=true'))
      return void res.end(path === '/apis/g/v1/quiet' ? '{"items":[],"metadata":{"resourceVersion":"1"}}' : '{}');
    if (path === '/apis/g/v1/quiet') quietWatches++;
    (WATCHES[path] ?? things)(res);
  });
  server.on('secureConnection', () => connections++);
  const port = await listen(server);
  t.teardown(() => {
    server.close();
    server.closeAllConnections();
  });
  return { port, connections: () => connections, quietWatches: () => quietWatches };
}

function kubeconfigFor(port: number, proxyUrl?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca.certPem).toString('base64'), proxyUrl }],
    users: [{ name: 'u', token: 'not-a-secret' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

const ROUNDS = [
  { name: 'one call at a time', rounds: 5, parallel: 1, most: 1 },
  { name: 'rounds of 13 at once, as a permission round with probes', rounds: 3, parallel: 13, most: KUBE_CONNECTIONS },
];

for (const c of ROUNDS) {
  t.test(`${c.name}: at most ${c.most} TLS connection(s) for ${c.rounds * c.parallel} calls`, async (t) => {
    const server = await apiserver(t);
    const kc = kubeconfigFor(server.port);
    for (let round = 0; round < c.rounds; round++) {
      const answers = await Promise.all(
        Array.from({ length: c.parallel }, () => kubeExchange(kc, 'GET', '/apis', undefined, 5_000)),
      );
      t.equal(answers.length, c.parallel);
    }
    t.ok(server.connections() <= c.most, `${server.connections()} connections`);
  });
}

t.test('a call waiting for a connection while a frozen apiserver holds them all times out on its own budget', async (t) => {
  const server = await apiserver(t);
  const kc = kubeconfigFor(server.port);
  const held = Array.from({ length: KUBE_CONNECTIONS }, () =>
    kubeExchange(kc, 'GET', '/frozen', undefined, 30_000).catch((e: unknown) => e),
  );
  const started = performance.now();
  const probe = await kubeExchange(kc, 'GET', '/apis', undefined, 500).catch((e: unknown) => e);
  const waited = performance.now() - started;
  t.match(probe, { message: 'GET /apis: timed out', status: undefined });
  t.ok(waited < 5_000, `timed out after ${Math.round(waited)} ms, not after the held calls' 30 s`);
  // The held calls end when the teardown closes the stand-in's connections.
  void Promise.all(held);
});

/** One watch to its end: the events it gave, and what it ended with. */
async function watchToEnd(watch: HttpsWatch, path = '/apis/g/v1/things'): Promise<{ events: string[]; error: unknown }> {
  const events: string[] = [];
  return new Promise((resolve) => {
    void watch.watch(
      path,
      { resourceVersion: '1' },
      (type, object: { metadata?: { name?: string; resourceVersion?: string } }) =>
        events.push(`${type} ${object.metadata?.name ?? object.metadata?.resourceVersion}`),
      (error) => resolve({ events, error }),
    );
  });
}

t.test('a watch gives each event line, skips a line that is no event, and ends cleanly', async (t) => {
  const server = await apiserver(t);
  const { events, error } = await watchToEnd(new HttpsWatch(kubeconfigFor(server.port), WATCH_SILENCE_MS));
  t.same(events, ['ADDED a', 'MODIFIED a', 'BOOKMARK 7']);
  t.equal(error, null);
});

t.test('the watches share their connections; one that fails leaves the others going', async (t) => {
  const server = await apiserver(t);
  const kc = kubeconfigFor(server.port);
  const watch = new HttpsWatch(kc, WATCH_SILENCE_MS);
  for (let i = 0; i < 8; i++) t.equal((await watchToEnd(watch)).error, null, `watch ${i + 1} ended cleanly`);
  const shared = server.connections();
  t.ok(shared <= 2, `eight watches, ${shared} TLS connection(s)`);
  // Another kind's watch lives on while these fail: an answer other than 200, silence, a closed connection.
  const going = watchToEnd(watch, '/apis/g/v1/slow');
  const gone = await watchToEnd(watch, '/apis/g/v1/gone');
  t.match(gone.error, { statusCode: 410, message: 'Gone' }, 'an answer other than 200 ends the watch with its status');
  t.match((await watchToEnd(new HttpsWatch(kc, 100), '/apis/g/v1/silent')).error, { name: 'TimeoutError' });
  t.match((await watchToEnd(watch, '/apis/g/v1/closed')).error, { code: 'ECONNRESET' }, 'closed on a new connection: ended');
  t.same(await going, { events: ['ADDED first', 'ADDED second'], error: null }, 'the other watch was not touched');
});

t.test('a watch sent on a kept connection the apiserver closes just then is sent again', async (t) => {
  const server = await apiserver(t);
  const watch = new HttpsWatch(kubeconfigFor(server.port), WATCH_SILENCE_MS);
  t.equal((await watchToEnd(watch)).error, null, 'the first watch ends cleanly and leaves its connection kept');
  const { events, error } = await watchToEnd(watch, '/apis/g/v1/closed-when-kept');
  t.same([events, error], [['ADDED a', 'MODIFIED a', 'BOOKMARK 7'], null], 'sent again on a new connection');
  t.equal(server.connections(), 2);
});

t.test(`a quiet kind is watched again within ${WATCH_AGAIN_MAX_MS} ms of each clean end, on the same connection`, async (t) => {
  const server = await apiserver(t);
  const failures: unknown[] = [];
  const watch = clientNodeApi(kubeconfigFor(server.port)).watchClasses(
    { group: 'g', version: 'v1', plural: 'quiet' },
    { listed: () => undefined, upserted: () => undefined, deleted: () => undefined, failed: (e) => failures.push(e) },
  );
  await watch.start();
  // client-node alone watches again at once, then after 1, 2 and 4 s: 4 watches in 6.5 s. Capped at 1 s: 8.
  await new Promise((resolve) => setTimeout(resolve, 6_500));
  watch.stop();
  t.ok(server.quietWatches() >= 6, `${server.quietWatches()} watches in 6.5 s`);
  t.same(failures, []);
  t.equal(server.connections(), 2, 'one connection for the list, one kept for the watches');
});

t.test('a stopped informer opens no watch after it, though stop() came during its wait to watch again', async (t) => {
  const server = await apiserver(t);
  const watch = clientNodeApi(kubeconfigFor(server.port)).watchClasses(
    { group: 'g', version: 'v1', plural: 'quiet' },
    { listed: () => undefined, upserted: () => undefined, deleted: () => undefined, failed: () => undefined },
  );
  await watch.start();
  // Each watch ends at once: ListWatch watches again at once after the first, then waits (up to
  // WATCH_AGAIN_MAX_MS) before each next one.
  while (server.quietWatches() < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 100));
  watch.stop();
  await new Promise((resolve) => setTimeout(resolve, WATCH_AGAIN_MAX_MS + 1_000));
  t.equal(server.quietWatches(), 2, 'no watch after stop()');
});

for (const path of ['/apis/g/v1/unanswered', '/apis/g/v1/silent'])
  t.test(`a silent watch (${path}) ends with a TimeoutError, which ListWatch answers by watching again at once`, async (t) => {
    const server = await apiserver(t);
    const started = performance.now();
    const { error } = await watchToEnd(new HttpsWatch(kubeconfigFor(server.port), 300), path);
    t.match(error, { name: 'TimeoutError' });
    t.ok(performance.now() - started < 5_000);
  });

t.test(`an event longer than ${BOUNDS.watchLineChars} characters ends the watch with an error`, async (t) => {
  const server = await apiserver(t);
  const { events, error } = await watchToEnd(new HttpsWatch(kubeconfigFor(server.port), WATCH_SILENCE_MS), '/apis/g/v1/huge');
  t.same(events, []);
  t.match(error, { message: `a watch event longer than ${BOUNDS.watchLineChars} characters` });
});

t.test('the AbortController a watch returns stops it, with an AbortError', async (t) => {
  const server = await apiserver(t);
  const ended = new Promise<unknown>((resolve) => {
    void new HttpsWatch(kubeconfigFor(server.port), WATCH_SILENCE_MS)
      .watch('/apis/g/v1/silent', {}, () => undefined, resolve)
      .then((controller) => setTimeout(() => controller.abort(), 50));
  });
  t.match(await ended, { name: 'AbortError' });
});

t.test('a kubeconfig with a proxy goes through the proxy', async (t) => {
  const server = await apiserver(t);
  let tunnels = 0;
  const proxy = createHttpServer();
  proxy.on('connect', (req, client) => {
    tunnels++;
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const proxyPort = await listen(proxy);
  t.teardown(() => {
    proxy.close();
    proxy.closeAllConnections();
  });
  const answer = await kubeExchange(
    kubeconfigFor(server.port, `http://127.0.0.1:${proxyPort}`),
    'GET',
    '/apis',
    undefined,
    5_000,
  );
  t.same(answer.body, {});
  t.equal(tunnels, 1, 'one CONNECT through the proxy');
  t.equal(server.connections(), 1);
  const watched = await watchToEnd(new HttpsWatch(kubeconfigFor(server.port, `http://127.0.0.1:${proxyPort}`), WATCH_SILENCE_MS));
  t.same(watched, { events: ['ADDED a', 'MODIFIED a', 'BOOKMARK 7'], error: null }, 'a watch too');
  t.equal(tunnels, 2, 'its own CONNECT through the proxy');
});

t.test('docs/cluster.md states the pool and the watches as they are', async (t) => {
  const text = readFileSync(new URL('../../docs/cluster.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  t.match(text, `a pool of at most ${KUBE_CONNECTIONS} keep-alive TLS connections per replica`);
  t.match(text, `An idle connection is closed after ${KUBE_IDLE_MS / 1000} s.`);
  t.match(text, `a watch may go ${WATCH_SILENCE_MS / 1000} s without a connection or a byte`);
  t.match(text, `server-side timeout of ${WATCH_TIMEOUT_S} s`);
  t.match(text, `is watched again within ${WATCH_AGAIN_MAX_MS / 1000} s of a clean end`);
});
