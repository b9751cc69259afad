// npm run fuzz -- --runs N [--seed S]: the envelope fuzzing at volume, with 16 requests in flight.
// Reports cases, answers by status, the slowest answer, and any failure with its case.
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import type { FuzzCase } from './envelope-arbitrary.js';

process.env.FUZZ_SIZE_SCALE ??= '0.02';
const { checkAnswer, fuzzCase } = await import('./envelope-arbitrary.js');
const { DEADLINE_MS, startFuzzTarget } = await import('./fuzz-server.js');
/** Requests in flight at once: enough to keep the server busy, few enough that none waits near the deadline. */
const IN_FLIGHT = 16;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '100000' }, seed: { type: 'string' } } });
const runs = Number(values.runs);
const seed = Number(values.seed ?? Date.now() % 2 ** 31);
const target = await startFuzzTarget(true);
const statuses = new Map<number, number>();
let slowest = 0;
let done = 0;
const started = Date.now();
const BATCH = 1024;
try {
  for (let batch = 0; done < runs; batch++) {
    const cases = fc.sample(fuzzCase, { numRuns: Math.min(BATCH, runs - done), seed: seed + batch });
    let next = 0;
    const one = async (c: FuzzCase): Promise<void> => {
      let answer;
      try {
        answer = await target.send(c);
      } catch (error) {
        throw new Error(
          `seed ${seed}, batch ${batch}: ${c.description}: ${(error as Error).message}\n${c.body.toString('latin1').slice(0, 500)}`,
        );
      }
      const problem = checkAnswer(c, answer.status, answer.body);
      if (problem !== undefined)
        throw new Error(`seed ${seed}, batch ${batch}: ${c.description}: ${problem}\n${c.body.toString('latin1').slice(0, 500)}`);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      slowest = Math.max(slowest, answer.ms);
    };
    const worker = async (): Promise<void> => {
      while (next < cases.length) await one(cases[next++] as FuzzCase);
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    done += cases.length;
    if (batch % 50 === 0) process.stderr.write(`${done} cases, ${Math.round(done / ((Date.now() - started) / 1000))}/s\n`);
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    JSON.stringify({
      cases: done,
      seed,
      seconds: Math.round(seconds),
      perSecond: Math.round(done / seconds),
      statuses: Object.fromEntries(statuses),
      slowestMs: Math.round(slowest),
      deadlineMs: DEADLINE_MS,
      failures: 0,
    }),
  );
} catch (error) {
  console.error((error as Error).message);
  console.log(JSON.stringify({ cases: done, seed, failures: 1 }));
  process.exitCode = 1;
} finally {
  await target.stop();
}
