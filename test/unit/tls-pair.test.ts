import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { makeCa, makeServingCert } from '../../src/certs/make-certs.js';
import { loadServingPair } from '../../src/certs/serving-pair.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-pair-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('loadServingPair says which check failed', async (t) => {
  const ca = await makeCa('pair test CA', 1);
  const good = await makeServingCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], days: 1 });
  const expired = await makeServingCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], days: 0 });
  const other = await makeServingCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], days: 1 });
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const pair = loadServingPair(file('good.crt', good.certPem), file('good.key', good.keyPem));
  t.ok(pair.notAfter.getTime() > Date.now());
  t.match(pair.subject, 'CN=localhost');
  t.throws(() => loadServingPair(file('old.crt', expired.certPem), file('old.key', expired.keyPem)), /expired at/);
  t.throws(
    () => loadServingPair(file('good.crt', good.certPem), file('other.key', other.keyPem)),
    /does not belong to the certificate/,
  );
  t.throws(
    () => loadServingPair(join(dir, 'missing.crt'), join(dir, 'good.key')),
    /cannot read the serving certificate or key: ENOENT/,
  );
  t.throws(() => loadServingPair(file('junk.crt', 'hello'), join(dir, 'good.key')), /is not a PEM certificate/);
  t.throws(() => loadServingPair(join(dir, 'good.crt'), file('junk.key', 'hello')), /is not a PEM private key/);
  const future = new Date(Date.now() - 2 * 86_400_000);
  t.throws(() => loadServingPair(join(dir, 'good.crt'), join(dir, 'good.key'), future), /is not valid before/);
});
