import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import t from 'tap';
import { ensureDevCerts, devCertPaths } from '../../src/certs/dev-certs.js';
import { parseServeOptions } from '../../src/config/serve-options.js';
import { createLogger } from '../../src/log/logger.js';
import { startServer } from '../../src/server/serve.js';
import { memoryLog } from '../helpers/app.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';
import { httpsRequest } from '../helpers/https.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-https-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('serves admission reviews over real HTTPS on loopback', async (t) => {
  await ensureDevCerts(dir);
  const paths = devCertPaths(dir);
  const ca = readFileSync(paths.caFile);
  const log = memoryLog();
  const options = parseServeOptions(
    [
      `--tls-cert-file=${paths.certFile}`,
      `--tls-private-key-file=${paths.keyFile}`,
      '--port=0',
      '--bind-address=127.0.0.1',
      `--classes-from=${FIXTURES}class-sets/cluster.yaml`,
      '--shutdown-delay=0',
    ],
    {},
  );
  const server = await startServer(options, createLogger('info', log.stream));
  t.teardown(() => server.shutdown('test done'));

  const ready = await httpsRequest(server.port, { method: 'GET', path: '/readyz', ca });
  t.same([ready.status, ready.body], [200, 'ok']);

  const fixture = readJson<{ review: unknown }>(`${FIXTURES}admission/volumesnapshotclasses/v1/create-second-default.json`);
  const answer = await httpsRequest(server.port, { path: '/validate', body: JSON.stringify(fixture.review), ca });
  t.equal(answer.status, 200);
  const body = JSON.parse(answer.body) as { response: { allowed: boolean; status: { message: string } } };
  t.equal(body.response.allowed, false);
  t.equal(
    body.response.status.message,
    'default snapshot class: csi-hostpath-snapclass already exists for driver: hostpath.csi.k8s.io' +
      '; to move the default, first remove it from csi-hostpath-snapclass: kubectl annotate volumesnapshotclasses csi-hostpath-snapclass snapshot.storage.kubernetes.io/is-default-class-',
  );

  await t.rejects(
    new Promise((resolve, reject) => {
      const socket = connect({
        host: '127.0.0.1',
        port: server.port,
        ca,
        servername: 'localhost',
        maxVersion: 'TLSv1.1',
        minVersion: 'TLSv1',
      });
      socket.on('secureConnect', () => {
        socket.end();
        resolve('connected');
      });
      socket.on('error', reject);
    }),
    'TLS 1.1 is refused',
  );
});
