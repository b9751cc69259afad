// The cluster layer's one error type: what the apiserver answered (status, reason, its clock) or that it did not
// answer, made by kube-http.ts from real HTTP answers on loopback.
import { createServer } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import t from 'tap';
import { ApiserverError, statusOf } from '../../src/cluster/apiserver-error.js';
import { kubeExchange } from '../../src/cluster/kube-http.js';

function kubeconfigFor(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

t.test('an apiserver Status answer: status, reason, message and the Date header', async (t) => {
  const server = createServer((req, res) => {
    const [status, body] =
      req.url === '/conflict'
        ? [409, JSON.stringify({ kind: 'Status', reason: 'Conflict', message: 'the object has been modified' })]
        : [502, 'bad gateway (not JSON)'];
    res.writeHead(status, { 'content-type': 'application/json', date: 'Wed, 25 Nov 2026 10:00:00 GMT' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const kc = kubeconfigFor((server.address() as { port: number }).port);
  const conflict = await kubeExchange(kc, 'PUT', '/conflict', {}).catch((e: unknown) => e);
  t.ok(conflict instanceof ApiserverError);
  t.match(conflict, {
    status: 409,
    reason: 'Conflict',
    retryable: true,
    date: Date.parse('2026-11-25T10:00:00Z'),
    message: 'PUT /conflict: HTTP 409: the object has been modified',
  });
  const gateway = await kubeExchange(kc, 'GET', '/other').catch((e: unknown) => e);
  t.match(gateway, { status: 502, reason: undefined, retryable: true, message: 'GET /other: HTTP 502: bad gateway (not JSON)' });
});

t.test('no answer: no status, retryable; statusOf reads only this type', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const refused = await kubeExchange(kubeconfigFor(port), 'GET', '/apis').catch((e: unknown) => e);
  t.ok(refused instanceof ApiserverError);
  t.match(refused, { status: undefined, retryable: true, message: /ECONNREFUSED/ });
  t.equal(statusOf(new ApiserverError('x', 403, 'Forbidden')), 403);
  t.equal(new ApiserverError('x', 403).retryable, false, 'a 403 is not retried');
  t.equal(statusOf(Object.assign(new Error('x'), { code: 403 })), undefined, 'a look-alike is not an apiserver answer');
  t.equal(
    ApiserverError.from(Object.assign(new Error('Forbidden'), { statusCode: 403 })).status,
    403,
    "client-node's watch error",
  );
});
