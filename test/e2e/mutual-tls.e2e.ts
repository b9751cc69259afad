// Mutual TLS against the real kube-apiserver, configured as docs/install.md shows (an AdmissionConfiguration
// whose kubeconfig gives the webhook's client certificate): its admission calls pass; a forged review sent
// straight to the port, without that certificate, is refused at the handshake.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startCluster, WEBHOOK_CLIENT, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { freePort, stopAll, waitFor } from './processes.js';
import { NS, rejection, snapshotObjects, VS, VSC } from './snapshot-objects.js';
import { startWebhook, untilCalled, registerWebhook, type TestWebhook } from './webhook.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-mtls-'));
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
t.teardown(async () => {
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

function probe(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

/** A review sent straight to the webhook with this client identity (or none): HTTP status, or why refused. */
function direct(port: number, ca: Buffer, identity?: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/validate', ca, servername: 'localhost', timeout: 5000, ...identity },
      (res) => {
        res.resume();
        res.on('end', () => resolve(`HTTP ${res.statusCode}`));
      },
    );
    req.setHeader('content-type', 'application/json');
    req.on('error', (error: NodeJS.ErrnoException) => resolve(`refused: ${error.code ?? error.message}`));
    req.end(readFileSync('test/fixtures/samples/second-default-class.json'));
  });
}

t.test('the apiserver calls the webhook over mutual TLS; a forged review is refused', async (t) => {
  cluster = await startCluster(join(dir, 'cluster'), { webhookClientCert: true });
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  const probePort = await freePort();
  webhook = await startWebhook(
    dir,
    cluster.kubeconfig,
    [`--client-ca-file=${join(cluster.dir, 'ca.crt')}`, `--allowed-client-names=${WEBHOOK_CLIENT}`, `--probe-port=${probePort}`],
    false,
  );
  await waitFor('ready on the probe port', async () => (await probe(probePort, '/readyz')) === 200, 20_000);
  await registerWebhook(kc, webhook.port, webhook.caBundle);
  await untilCalled(kc, 'the apiserver reaches the webhook');
  const objects = snapshotObjects(kc);
  const unnamedRef = {
    metadata: { name: 'unnamed-ref' },
    spec: {
      driver: 'd',
      deletionPolicy: 'Retain',
      source: { snapshotHandle: 'h' },
      volumeSnapshotRef: { name: '', namespace: '' },
    },
  };
  t.match(
    await rejection(objects.create(VSC, unnamedRef)),
    'denied the request: both Spec.VolumeSnapshotRef.Name',
    'the rules answered the apiserver',
  );
  t.equal(
    await rejection(objects.create(VS, { metadata: { name: 'one' }, spec: { source: { persistentVolumeClaimName: 'a' } } })),
    '(admitted)',
  );
  const ca = Buffer.from(webhook.caBundle, 'base64');
  t.match(await direct(webhook.port, ca), /^refused: /, 'no client certificate: refused at the handshake');
  const admin = { cert: readFileSync(join(cluster.dir, 'admin.crt')), key: readFileSync(join(cluster.dir, 'admin.key')) };
  t.match(await direct(webhook.port, ca, admin), /^refused: /, 'a certificate of the same CA but another name: cut');
  const client = {
    cert: readFileSync(join(cluster.dir, `${WEBHOOK_CLIENT}.crt`)),
    key: readFileSync(join(cluster.dir, `${WEBHOOK_CLIENT}.key`)),
  };
  t.equal(await direct(webhook.port, ca, client), 'HTTP 200', 'the apiserver identity itself is answered');
});
