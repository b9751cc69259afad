// Connection abuse against the built server with the Deployment's heap cap (startBuiltServer), loopback only,
// bounded in count and time: slow headers, slow bodies, an endless chunked body, idle keep-alive and handshake
// floods. Every process is the test's own and is killed by its pid at the end (startBuiltServer).
import { readFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import t from 'tap';
import { BOUNDS } from '../../src/limits/bounds.js';

const MAX_CONNECTIONS = BOUNDS.connections;
import { startBuiltServer, type BuiltServer } from '../helpers/built-server.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { httpsRequest } from '../helpers/https.js';
import { memoryLimitMb } from '../helpers/deployment.mjs';

function tlsTo(server: BuiltServer): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: server.ca, servername: 'localhost' }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
  });
}

/**
 * Opens `count` TLS connections in batches of 50; each sends one request and then idles on keep-alive
 * (what a pooled client leaves behind).
 */
async function idleFlood(server: BuiltServer, count: number): Promise<TLSSocket[]> {
  const flood: TLSSocket[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(Array.from({ length: 50 }, () => tlsTo(server)));
    for (const s of batch) {
      s.on('error', () => undefined);
      s.on('data', () => undefined);
      s.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    }
    flood.push(...batch);
  }
  return flood;
}

/** Milliseconds until the server closes the socket, or undefined if it is still open after `limitMs`. */
function closedWithin(socket: Socket, limitMs: number): Promise<number | undefined> {
  const started = Date.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
    socket.on('error', () => undefined);
  });
}

/** Writes a byte every `everyMs` until the socket closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write(text[i++ % text.length] as string);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

async function metric(server: BuiltServer, name: string): Promise<number> {
  const { body } = await httpsRequest(server.port, { method: 'GET', path: '/metrics', ca: server.ca });
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? NaN);
}

t.test('slow headers, slow bodies and an endless chunked body are cut at the documented 4 s', async (t) => {
  const server = await startBuiltServer(t);
  const [slowHeaders, slowBody, chunked] = await Promise.all([tlsTo(server), tlsTo(server), tlsTo(server)]);
  slowHeaders.write('POST /validate HTTP/1.1\r\nHost: localhost\r\n');
  trickle(slowHeaders, 'X-Slow: aaaaaaaaaaaaaaaa\r\n', 200);
  slowBody.write(
    'POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
  );
  trickle(slowBody, ' ', 200);
  chunked.write(
    'POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  let answer = '';
  chunked.on('data', (c: Buffer) => (answer += c.toString()));
  const chunk = `10000\r\n${' '.repeat(0x10000)}\r\n`;
  const pump = setInterval(() => chunked.destroyed || chunked.write(chunk), 5);
  const [headersMs, bodyMs, chunkedMs] = await Promise.all([
    closedWithin(slowHeaders, 15_000),
    closedWithin(slowBody, 15_000),
    closedWithin(chunked, 15_000),
  ]);
  clearInterval(pump);
  t.ok(headersMs !== undefined && headersMs < 7_000, `slow headers cut after ${headersMs} ms`);
  t.ok(bodyMs !== undefined && bodyMs < 7_000, `slow body cut after ${bodyMs} ms`);
  t.ok(chunkedMs !== undefined && chunkedMs < 7_000, `endless chunked body cut after ${chunkedMs} ms`);
  t.match(answer, /^HTTP\/1\.1 (413|408)/, `the chunked body was answered (${answer.split('\r\n')[0]})`);
  const ready = await httpsRequest(server.port, { method: 'GET', path: '/readyz', ca: server.ca });
  t.equal(ready.status, 200, 'still serving');
});

t.test(`an idle keep-alive flood is held at ${MAX_CONNECTIONS} connections and probes keep answering`, async (t) => {
  const server = await startBuiltServer(t);
  const rssBefore = await metric(server, 'snapshot_webhook_process_resident_memory_bytes');
  const flood: TLSSocket[] = [];
  t.teardown(() => flood.forEach((s) => s.destroy()));
  const count = MAX_CONNECTIONS + 300;
  flood.push(...(await idleFlood(server, count)));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const probes = await Promise.all(
    Array.from({ length: 20 }, () => httpsRequest(server.port, { method: 'GET', path: '/readyz', ca: server.ca })),
  );
  t.same(
    probes.map((p) => p.status),
    probes.map(() => 200),
    'every probe on a new connection is answered',
  );
  const open = await metric(server, 'snapshot_webhook_connections');
  const evicted = await metric(server, 'snapshot_webhook_connections_evicted_total');
  t.ok(open <= MAX_CONNECTIONS, `open connections held at ${open}`);
  t.ok(evicted >= count - MAX_CONNECTIONS, `${evicted} idle connections closed`);
  const rssAfter = await metric(server, 'snapshot_webhook_process_resident_memory_bytes');
  t.comment(`RSS ${Math.round(rssBefore / 2 ** 20)} MiB before, ${Math.round(rssAfter / 2 ** 20)} MiB with ${open} connections`);
  t.ok(rssAfter < memoryLimitMb() * 2 ** 20, 'within the container limit');
});

t.test('a flood of connections that never start their handshake is cut and does not starve probes', async (t) => {
  const server = await startBuiltServer(t);
  const silent: Socket[] = Array.from({ length: 150 }, () => {
    const s = tcpConnect({ host: '127.0.0.1', port: server.port });
    s.on('error', () => undefined);
    return s;
  });
  t.teardown(() => silent.forEach((s) => s.destroy()));
  const probe = await httpsRequest(server.port, { method: 'GET', path: '/healthz', ca: server.ca });
  t.equal(probe.status, 200, 'a probe is answered during the flood');
  const closed = await Promise.all(silent.map((s) => closedWithin(s, 15_000)));
  t.ok(
    closed.every((ms) => ms !== undefined && ms < 7_000),
    `every silent connection cut (slowest after ${Math.max(...closed.map((ms) => ms ?? Infinity))} ms)`,
  );
});

t.test(
  'idle connections and stalled handshakes, each three times their cap: probes and reviews on new connections are answered',
  async (t) => {
    const server = await startBuiltServer(t);
    const flood: Socket[] = [];
    t.teardown(() => flood.forEach((s) => s.destroy()));
    flood.push(...(await idleFlood(server, 3 * MAX_CONNECTIONS)));
    // Connections that open TCP and never start their handshake, within their 4 s handshake timeout.
    for (let i = 0; i < 3 * BOUNDS.handshakes; i++) {
      const s = tcpConnect({ host: '127.0.0.1', port: server.port });
      s.on('error', () => undefined);
      flood.push(s);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const review = readFileSync(`${FIXTURES}samples/second-default-class.json`, 'utf8');
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => httpsRequest(server.port, { method: 'GET', path: '/healthz', ca: server.ca })),
      ...Array.from({ length: 10 }, () => httpsRequest(server.port, { method: 'GET', path: '/readyz', ca: server.ca })),
      ...Array.from({ length: 10 }, () =>
        httpsRequest(server.port, { method: 'POST', path: '/validate', ca: server.ca, body: review }),
      ),
    ]);
    t.same(
      answers.map((a) => a.status),
      answers.map(() => 200),
      'every probe and review on a new connection is answered',
    );
    t.ok(
      answers.slice(20).every((a) => a.body.includes('"allowed":false')),
      'the reviews are decided (a second default, denied)',
    );
  },
);
