import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { CODE_CACHE_FILE, compileBundle, runBundle } from './compiled-bundle.js';

/**
 * dist/bundle/make-code-cache.js CERT_DIR: writes V8's code cache for the bundle next to it. The cache holds
 * the functions compiled by the time it is made, so the bundle runs first: the server starts on loopback with
 * the pair in CERT_DIR (tls.crt, tls.key, ca.crt: made for the purpose at build time, never shipped), answers
 * one AdmissionReview, then the cache is written and the server stopped. Run it with the Node binary (and V8
 * flags) that will run the server: V8 rejects a cache made by another.
 */
const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'make-code-cache',
    kind: { group: 'snapshot.storage.k8s.io', version: 'v1', kind: 'VolumeSnapshot' },
    resource: { group: 'snapshot.storage.k8s.io', version: 'v1', resource: 'volumesnapshots' },
    operation: 'CREATE',
    namespace: 'default',
    name: 'warm-up',
    userInfo: { username: 'build' },
    object: {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: 'warm-up', namespace: 'default' },
      spec: { source: { persistentVolumeClaimName: 'data' } },
    },
  },
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** One HTTPS call to the server under construction; resolves with the status, 0 when it cannot connect. */
function call(port: number, ca: Buffer, path: string, body?: string): Promise<number> {
  return new Promise((resolve) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    // The chain is checked against the pair's CA; the name is not (any pair's SANs will do on loopback).
    const options = {
      host: '127.0.0.1',
      port,
      path,
      ca,
      headers,
      checkServerIdentity: () => undefined,
      agent: false,
      timeout: 2000,
    };
    const req = request({ ...options, method: body === undefined ? 'GET' : 'POST' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

async function main(certDir: string): Promise<void> {
  const dir = dirname(process.argv[1] ?? '.');
  const port = await freePort();
  const ca = readFileSync(join(certDir, 'ca.crt'));
  process.argv = [
    process.argv[0] ?? 'node',
    join(dir, 'main.js'),
    'serve',
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--tls-cert-file=${join(certDir, 'tls.crt')}`,
    `--tls-private-key-file=${join(certDir, 'tls.key')}`,
    '--log-level=error',
    '--shutdown-delay=0',
  ];
  const compiled = compileBundle(dir);
  runBundle(compiled);
  for (let tries = 0; (await call(port, ca, '/readyz')) !== 200; tries++) {
    if (tries === 200) throw new Error('the server did not become ready within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const status = await call(port, ca, '/validate', REVIEW);
  if (status !== 200) throw new Error(`the warm-up AdmissionReview got HTTP ${status}`);
  const cache = compiled.script.createCachedData();
  writeFileSync(join(dir, CODE_CACHE_FILE), cache);
  process.stderr.write(`wrote ${join(dir, CODE_CACHE_FILE)} (${Math.round(cache.length / 1024)} KiB)\n`);
  process.kill(process.pid, 'SIGTERM');
}

const certDir = process.argv[2];
if (certDir === undefined) {
  process.stderr.write('usage: make-code-cache.js CERT_DIR\n');
  process.exitCode = 2;
} else {
  main(certDir).catch((error: unknown) => {
    process.stderr.write(`make-code-cache: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
