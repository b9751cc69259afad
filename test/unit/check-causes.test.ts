// The cause `snapshot-webhook check` reads in each answer of test/fixtures/check/causes.yaml (the apiserver's own
// words, from test/e2e/check.e2e.ts), and an admitted probe with and without a registration.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { probeCause } from '../../src/cli/check-causes.js';

interface Case {
  readonly name: string;
  readonly message: string;
  readonly cause: string | null;
}
const cases = parse(readFileSync('test/fixtures/check/causes.yaml', 'utf8')) as Case[];

for (const c of cases)
  t.test(c.name, async (t) => {
    const found = probeCause({ admitted: false, status: 400, message: c.message }, true);
    t.equal(found?.cause ?? null, c.cause);
    if (found !== undefined) t.match(found.message, c.message, 'the line keeps the apiserver words');
  });

t.test('an admitted second default: not-denied with a registration, registration without one', async (t) => {
  t.equal(probeCause({ admitted: true }, true)?.cause, 'not-denied');
  t.equal(probeCause({ admitted: true }, false)?.cause, 'registration');
});
