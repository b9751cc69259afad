// kubeExchange keeps its connections to the apiserver open: rounds of calls (the permission reviews and watch
// probes every 10 s) reuse a few TLS connections instead of a handshake each, and a kubeconfig with a proxy still
// goes through the proxy. Real HTTPS on loopback.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import t, { type Test } from 'tap';
import { makeCa, makeServingCert } from '../../src/certs/make-certs.js';
import { WatchConnection } from '../../src/cluster/client-node-api.js';
import { KUBE_CONNECTIONS, KUBE_IDLE_MS, kubeExchange } from '../../src/cluster/kube-http.js';

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

/** An apiserver stand-in that answers `{}` and counts the TLS connections it accepted. */
async function apiserver(t: Test): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    if (req.url === '/frozen') return; // never answers, as a frozen apiserver
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!req.url?.includes('watch=true')) return void res.end('{}');
    // A watch: one bookmark, then the server-side timeout ends it.
    res.write('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}\n');
    setTimeout(() => res.end(), 20);
  });
  server.on('secureConnection', () => connections++);
  const port = await listen(server);
  t.teardown(() => {
    server.close();
    server.closeAllConnections();
  });
  return { port, connections: () => connections };
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

/** One watch through client-node's Watch, to its end; resolves with what it ended with. */
async function watchToEnd(config: KubeConfig): Promise<unknown> {
  return new Promise((resolve) => {
    void new Watch(config).watch('/apis/g/v1/things', { watch: true }, () => undefined, resolve);
  });
}

t.test("client-node's watches share their connections until one fails", async (t) => {
  const server = await apiserver(t);
  const connection = new WatchConnection(kubeconfigFor(server.port));
  // A watch may start again before the last one's connection is free: its dispatcher then opens a second one.
  for (let i = 0; i < 8; i++) t.equal(await watchToEnd(connection.config), null, `watch ${i + 1} ended cleanly`);
  const shared = server.connections();
  t.ok(shared <= 2, `eight watches, ${shared} TLS connection(s)`);
  connection.drop();
  await watchToEnd(connection.config);
  t.equal(server.connections(), shared + 1, 'after a failure, the next watch has a connection of its own');
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
});

t.test('docs/cluster.md states the pool as it is', async (t) => {
  const text = readFileSync(new URL('../../docs/cluster.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  t.match(text, `a pool of at most ${KUBE_CONNECTIONS} keep-alive TLS connections per replica`);
  t.match(text, `An idle connection is closed after ${KUBE_IDLE_MS / 1000} s.`);
});
