// The bench's open-loop sender at a fixed rate (test/bench/fixed-rate.mjs) against a loopback HTTPS server that
// never answers some bodies: each unanswered request ends at the timeout and is counted as a timeout, the others
// are answered and timed, and the sender finishes instead of waiting for answers that never come.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { makeCa, makeServingCert } from '../../src/certs/make-certs.js';
import { fixedRate } from '../bench/fixed-rate.mjs';

const ca = await makeCa('fixed-rate-test-ca', 1);
const serving = await makeServingCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], days: 1 });
const dir = mkdtempSync(join(tmpdir(), 'sw-fixed-rate-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const caFile = join(dir, 'ca.crt');
writeFileSync(caFile, ca.certPem);

const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    if (body === 'stall') return;
    res.writeHead(body === 'refuse' ? 400 : 200).end('{}');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  server.closeAllConnections();
  server.close();
});
const { port } = server.address() as AddressInfo;

// 40 requests measured (after a second at the rate, not measured), one in four stalls and one in eight is refused.
const bodies = ['a', 'stall', 'b', 'refuse', 'c', 'stall', 'd', 'e'];
const result = await fixedRate({
  url: `https://localhost:${port}/validate`,
  ca: caFile,
  bodies,
  rate: 40,
  duration: 1,
  timeoutMs: 300,
});
t.equal(result.timeouts, 10, 'every stalled request is counted as a timeout');
t.equal(result.errors, 0, 'a timeout is not counted as an error');
t.equal(result.requests, 30, 'the answered requests are the ones timed');
t.equal(result.non2xx, 5, 'a refused request is counted as non-2xx');
t.ok(result.latency.max < 300, 'no answered request waited for a timeout');
