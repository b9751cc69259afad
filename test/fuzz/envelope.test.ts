import fc from 'fast-check';
import t from 'tap';
import { checkAnswer, fuzzCase } from './envelope-arbitrary.js';
import { startFuzzTarget } from './fuzz-server.js';

/** Seeded so a failure reproduces; fast-check prints the seed and the shrunk case when one fails. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);

t.test(`envelopes through the real HTTPS path (${RUNS} cases, seed ${SEED})`, async (t) => {
  const target = await startFuzzTarget();
  t.teardown(() => target.stop());
  await t.resolves(
    fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const answer = await target.send(c);
        const problem = checkAnswer(c, answer.status, answer.body);
        if (problem !== undefined) throw new Error(`${c.description}: ${problem}: ${answer.body.slice(0, 300)}`);
      }),
      { numRuns: RUNS, seed: SEED },
    ),
    'never a 5xx, a dropped connection or a malformed answer; the uid always echoed',
  );
});
