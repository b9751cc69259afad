import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import t from 'tap';
import { makeCa, makeServingCert, type Issuer } from '../../src/certs/make-certs.js';
import { parseServeOptions } from '../../src/config/serve-options.js';
import { createLogger } from '../../src/log/logger.js';
import { startServer } from '../../src/server/serve.js';
import { memoryLog } from '../helpers/app.js';

/** Writes a pair the way the kubelet updates a mounted Secret: a new timestamped folder, then `..data` swapped. */
async function writePairAtomically(dir: string, ca: Issuer, generation: number): Promise<string> {
  const pair = await makeServingCert(ca, {
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    days: 1,
  });
  const folder = `..gen_${generation}`;
  mkdirSync(join(dir, folder));
  writeFileSync(join(dir, folder, 'tls.crt'), pair.certPem);
  writeFileSync(join(dir, folder, 'tls.key'), pair.keyPem);
  symlinkSync(folder, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  return new X509Certificate(pair.certPem).serialNumber;
}

function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time (agent: false), so the handshake shows the certificate served now.
    const req = request({ host: '127.0.0.1', port, path: '/healthz', ca, agent: false, timeout: 3000 }, (res) => {
      const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(serial) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** The real server on a loopback port, serving tls.crt and tls.key from `dir`. */
async function serveFrom(dir: string) {
  const log = memoryLog();
  const options = parseServeOptions(
    [
      `--tls-cert-file=${join(dir, 'tls.crt')}`,
      `--tls-private-key-file=${join(dir, 'tls.key')}`,
      '--port=0',
      '--bind-address=127.0.0.1',
      '--classes-from=test/fixtures/classes',
      '--shutdown-delay=0',
    ],
    {},
  );
  return { server: await startServer(options, createLogger('info', log.stream)), log };
}

t.test('a rotated certificate is served within 10 s, with no failed request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sw-rotate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ca = await makeCa('rotation test CA', 1);
  const firstSerial = await writePairAtomically(dir, ca, 1);
  symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
  symlinkSync('..data/tls.key', join(dir, 'tls.key'));
  const { server, log } = await serveFrom(dir);
  t.teardown(() => server.shutdown('test done'));
  t.equal(await servedSerial(server.port, ca.certPem), firstSerial);

  let failures = 0;
  let requests = 0;
  let running = true;
  const load = (async () => {
    while (running) {
      try {
        await servedSerial(server.port, ca.certPem);
      } catch {
        failures += 1;
      }
      requests += 1;
    }
  })();

  // A half-written pair (a key that does not match) is ignored, and the old certificate keeps serving.
  mkdirSync(join(dir, '..broken'));
  writeFileSync(
    join(dir, '..broken', 'tls.crt'),
    (await makeServingCert(ca, { commonName: 'x', dnsNames: ['localhost'], days: 1 })).certPem,
  );
  writeFileSync(
    join(dir, '..broken', 'tls.key'),
    (await makeServingCert(ca, { commonName: 'y', dnsNames: ['localhost'], days: 1 })).keyPem,
  );
  symlinkSync('..broken', join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  await new Promise((r) => setTimeout(r, 500));
  t.equal(await servedSerial(server.port, ca.certPem), firstSerial, 'a mismatched pair is not taken');
  t.ok(
    log.lines.some((l) => String(l.msg).startsWith('ignored a new certificate: the key in')),
    'and says why',
  );

  const started = Date.now();
  const secondSerial = await writePairAtomically(dir, ca, 2);
  let seen = '';
  while (Date.now() - started < 10_000 && seen !== secondSerial) {
    seen = await servedSerial(server.port, ca.certPem).catch(() => '');
    await new Promise((r) => setTimeout(r, 50));
  }
  running = false;
  await load;
  t.equal(seen, secondSerial, `the new serial is served after ${Date.now() - started} ms`);
  t.equal(failures, 0, `no request failed (${requests} sent during the rotation)`);
  t.ok(requests > 10, 'requests kept flowing');
});

t.test('a bad serving pair at start: not ready, a clear log line, no crash', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sw-expired-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ca = await makeCa('expired test CA', 1);
  const other = await makeServingCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], days: 1 });
  const mismatched = await makeServingCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], days: 1 });
  writeFileSync(join(dir, 'tls.crt'), other.certPem);
  writeFileSync(join(dir, 'tls.key'), mismatched.keyPem);
  const { server, log } = await serveFrom(dir);
  t.teardown(() => server.shutdown('test done'));
  const ready = await server.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 503);
  t.match(ready.body, /^not ready: no valid serving certificate: the key in .* does not belong to the certificate in /);
  t.ok(
    log.lines.some((l) => l.level === 50 && /does not belong to the certificate/.test(String(l.msg))),
    'logged as an error',
  );
  writeFileSync(join(dir, 'tls.key'), other.keyPem);
  await new Promise((r) => setTimeout(r, 600));
  const after = await server.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(after.body, 'ok', 'ready once a valid pair appears');
});
