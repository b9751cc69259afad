import { readFileSync } from 'node:fs';
import t from 'tap';
import { startBuiltServer } from '../helpers/built-server.js';
import { renderedEnv } from '../helpers/deployment.mjs';
import { FIXTURES } from '../helpers/fixtures.js';
import { httpsRequest } from '../helpers/https.js';
import { admissionReview } from '../helpers/review.mjs';

/** A DELETE review (allowed unchecked) carrying `extra`: what anyone who reaches the port can send. */
const hostile = (extra: string): string =>
  JSON.stringify(
    admissionReview(
      { group: '', version: 'v1', kind: 'X', resource: 'x' },
      { uid: 'hostile', operation: 'DELETE', extra: 'EXTRA' },
    ),
  ).replace('"EXTRA"', extra);

// Each shipped runtime profile: the base's (startBuiltServer runs the Deployment's NODE_OPTIONS) and the component
// single-node's, whose smaller heap cap is what these bodies must not exhaust either.
for (const [profile, env] of [
  ['the base', {}],
  ['the single-node component', renderedEnv(['single-node'])],
] as const)
  t.test(`${profile}: bodies within the size limit cannot exhaust the shipped heap; the server keeps answering`, async (t) => {
    const { child, port, ca } = await startBuiltServer(t, { args: ['--shutdown-delay=0'], env });
    const post = (body: string) => httpsRequest(port, { path: '/validate', body, ca });
    const objects = await post(hostile(`[${Array(1_400_000).fill('{}').join(',')}]`));
    t.same(
      [objects.status, JSON.parse(objects.body).code],
      [413, 'SW_TOO_COMPLEX'],
      '1,400,000 empty objects (4 MB) are refused',
    );
    for (const [what, fill, count] of [
      ['numbers', '1', 3_500_000],
      ['decimals', '1.5', 1_800_000],
      ['empty strings', '""', 2_300_000],
    ] as const) {
      const answer = await post(hostile(`[${Array(count).fill(fill).join(',')}]`));
      t.equal(answer.status, 200, `${count.toLocaleString('en')} ${what} (about 7 MB) are read and answered`);
    }
    const normal = await post(readFileSync(`${FIXTURES}samples/second-default-class.json`, 'utf8'));
    t.match(normal.body, '"allowed":false', 'and the next real request is answered');
    t.equal(child.exitCode, null, 'the process is alive');
  });
