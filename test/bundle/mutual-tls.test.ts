// Mutual TLS on the built server: only clients with a certificate from --client-ca-file, of an allowed name,
// reach the admission port; the kubelet probes the plain probe port. Certificates are made with openssl.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { freePort } from '../e2e/processes.js';
import { startBuiltServer } from '../helpers/built-server.js';
import { FIXTURES } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-mtls-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const openssl = (args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
function ca(name: string): void {
  openssl(['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '1', '-subj', `/CN=${name}`]);
}
function client(name: string, issuer: string): { cert: Buffer; key: Buffer } {
  writeFileSync(join(dir, `${name}.ext`), `extendedKeyUsage=clientAuth\nsubjectAltName=DNS:${name}.example.com\n`);
  openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  openssl([
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${issuer}.crt`,
    '-CAkey',
    `${issuer}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
  ]);
  return { cert: readFileSync(join(dir, `${name}.crt`)), key: readFileSync(join(dir, `${name}.key`)) };
}
ca('webhook-clients');
ca('other-ca');
const apiserver = client('kube-apiserver', 'webhook-clients');
const stranger = client('stranger', 'webhook-clients');
const forged = client('kube-apiserver-forged', 'other-ca');

/** POST /validate with an optional client certificate: the status, or the error that ended the connection. */
function post(port: number, serverCa: Buffer, body: string, identity?: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/validate', ca: serverCa, servername: 'localhost', ...identity },
      (res) => {
        res.resume();
        res.on('end', () => resolve(`HTTP ${res.statusCode}`));
      },
    );
    req.setHeader('content-type', 'application/json');
    req.on('error', (error: NodeJS.ErrnoException) => resolve(`refused: ${error.code ?? error.message}`));
    req.end(body);
  });
}

t.test('only an allowed client with a certificate from the CA reaches the rules', async (t) => {
  const probePort = await freePort();
  const server = await startBuiltServer(t, {
    args: [
      `--client-ca-file=${join(dir, 'webhook-clients.crt')}`,
      '--allowed-client-names=kube-apiserver',
      `--probe-port=${probePort}`,
    ],
  });
  const body = readFileSync(`${FIXTURES}samples/second-default-class.json`, 'utf8');
  t.equal(await post(server.port, server.ca, body, apiserver), 'HTTP 200', 'the apiserver, by its certificate');
  t.match(await post(server.port, server.ca, body), /^refused: /, 'no client certificate: refused at the handshake');
  t.match(await post(server.port, server.ca, body, forged), /^refused: /, 'a certificate from another CA: refused');
  t.match(await post(server.port, server.ca, body, stranger), /^refused: /, 'from the CA, but a name not allowed: cut');
  const probe = (path: string): Promise<number> =>
    new Promise((resolve, reject) =>
      get({ host: '127.0.0.1', port: probePort, path }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject),
    );
  t.equal(await probe('/readyz'), 200, 'the kubelet probes the plain probe port');
  t.equal(await probe('/healthz'), 200);
  t.equal(await probe('/validate'), 404, 'which answers nothing else');
  const metrics = await new Promise<string>((resolve, reject) =>
    get({ host: '127.0.0.1', port: probePort, path: '/metrics' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    }).on('error', reject),
  );
  t.match(metrics, /snapshot_webhook_tls_clients_refused_total\{reason="handshake"\} [2-9]/, 'refused handshakes counted');
  t.match(metrics, 'snapshot_webhook_tls_clients_refused_total{reason="name"} 1', 'the refused name counted');
  t.match(server.output(), '"mutualTls":true');
});

t.test('--allowed-client-names needs --client-ca-file', async (t) => {
  const r = spawnSync(
    process.execPath,
    ['dist/bundle/main.js', 'serve', '--tls-cert-file=x', '--tls-private-key-file=y', '--allowed-client-names=a'],
    { encoding: 'utf8', timeout: 30_000 },
  );
  t.equal(r.status, 2);
  t.match(r.stderr, '--allowed-client-names needs --client-ca-file');
});
