// A client that does not trust the serving certificate (what an apiserver with a wrong caBundle is) is counted in
// snapshot_webhook_tls_handshake_failures_total and logged once, not once per attempt. openssl s_client with
// another CA and -verify_return_error aborts the handshake with an alert, as Go's TLS client does.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startBuiltServer } from '../helpers/built-server.js';
import { httpsRequest } from '../helpers/https.js';

const ATTEMPTS = 5;

t.test('handshakes rejected by the client are counted by reason and logged at a bounded rate', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sw-handshake-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const wrongCa = join(dir, 'wrong-ca.crt');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      '/CN=wrong-ca',
      '-days',
      '1',
      '-keyout',
      join(dir, 'wrong-ca.key'),
      '-out',
      wrongCa,
    ],
    { stdio: 'ignore' },
  );
  const server = await startBuiltServer(t);
  for (let i = 0; i < ATTEMPTS; i++) {
    const r = spawnSync(
      'openssl',
      [
        's_client',
        '-connect',
        `127.0.0.1:${server.port}`,
        '-servername',
        'localhost',
        '-CAfile',
        wrongCa,
        '-verify_return_error',
      ],
      { input: '', encoding: 'utf8', timeout: 10_000 },
    );
    t.not(r.status, 0, `attempt ${i + 1}: the client refuses the certificate`);
  }
  const { body } = await httpsRequest(server.port, { method: 'GET', path: '/metrics', ca: server.ca });
  t.match(
    body,
    new RegExp(`^snapshot_webhook_tls_handshake_failures_total\\{reason="certificate-rejected"\\} ${ATTEMPTS}$`, 'm'),
  );
  // Log lines are written in batches at least every 250 ms.
  const rejectedLines = (): string[] =>
    server
      .output()
      .split('\n')
      .filter((l) => l.includes('the client rejects the serving certificate'));
  for (let waited = 0; rejectedLines().length === 0 && waited < 3000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
  const lines = rejectedLines();
  t.equal(lines.length, 1, `one log line for ${ATTEMPTS} failures`);
  t.match(JSON.parse(lines[0] ?? '{}'), { level: 40, reason: 'certificate-rejected', failures: 1 });
});
