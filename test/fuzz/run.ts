// npm run fuzz -- --runs N [--seed S]: the envelope fuzzing at volume, with 16 requests in flight, against the
// built server as it ships (info logging, the Deployment's heap cap, full-size extremes; FUZZ_SIZE_SCALE=0.02
// for a quick local run). Fails on any wrong answer, a crash, heap growth past 16 MB, a metric label value
// outside its fixed set (or more than 1,000 series), or a /metrics scrape slower than 1 s. Reports cases, answers by status, the slowest
// answer, heap, series and scrape time.
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import type { FuzzCase } from './envelope-arbitrary.js';

const { checkAnswer, fuzzCase } = await import('./envelope-arbitrary.js');
const { DEADLINE_MS, startFuzzTarget } = await import('./fuzz-server.js');
/** Requests in flight at once: enough to keep the server busy, few enough that none waits near the deadline. */
const IN_FLIGHT = 16;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '100000' }, seed: { type: 'string' } } });
const runs = Number(values.runs);
const seed = Number(values.seed ?? Date.now() % 2 ** 31);
const target = await startFuzzTarget(true);
const HEAP_GROWTH_MB = 16;
const SCRAPE_MS = 1_000;
/** Series of our own metrics (process and Node metrics aside), heap in use, and how long the scrape took. */
async function scrape(): Promise<{ series: number; heapMb: number; ms: number }> {
  const { text, ms } = await target.metrics();
  const foreign = foreignLabel(text);
  if (foreign !== undefined) throw new Error(`a metric label took a value from a request: ${foreign}`);
  const lines = text.split('\n');
  const series = lines.filter((l) => /^snapshot_webhook_(?!process|nodejs)/.test(l)).length;
  const heap = Number(/^snapshot_webhook_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]);
  return { series, heapMb: heap / 2 ** 20, ms };
}
const { allRoutes } = await import('../../src/rules/table.js');
const { RULE_IDS } = await import('../../src/rules/finding.js');
/** The values a request could try to put into a label, and the only ones allowed there. */
const ALLOWED: Readonly<Record<string, ReadonlySet<string>>> = {
  group: new Set([...[...allRoutes().values()].map((r) => r.group), 'other']),
  resource: new Set([...[...allRoutes().values()].map((r) => r.resource), 'other']),
  operation: new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'other']),
  rule: new Set(RULE_IDS),
};
/** A label value outside its fixed set, with its series; undefined when every value is allowed. */
function foreignLabel(text: string): string | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith('snapshot_webhook_')) continue;
    for (const [, name, value] of line.matchAll(/([a-z_]+)="([^"]*)"/g)) {
      const allowed = ALLOWED[name as string];
      if (allowed !== undefined && !allowed.has(value as string)) return `${name}="${value}" in ${line.slice(0, 200)}`;
    }
  }
  return undefined;
}
/** Series may appear as fixed-set values are first seen; never past this many. */
const MAX_SERIES = 1_000;
let baseline: { series: number; heapMb: number; ms: number } | undefined;
let last: { series: number; heapMb: number; ms: number } | undefined;
let slowestScrape = 0;
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
    const crash = target.crashed();
    if (crash !== undefined) throw new Error(`seed ${seed}, batch ${batch}: ${crash}`);
    last = await scrape();
    slowestScrape = Math.max(slowestScrape, last.ms);
    baseline ??= last;
    if (last.series > MAX_SERIES) throw new Error(`seed ${seed}, batch ${batch}: ${last.series} metric series`);
    if (last.ms > SCRAPE_MS) throw new Error(`seed ${seed}, batch ${batch}: /metrics took ${Math.round(last.ms)} ms`);
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
      heapMb: { first: baseline?.heapMb.toFixed(1), last: last?.heapMb.toFixed(1) },
      series: last?.series,
      slowestScrapeMs: Math.round(slowestScrape),
      logMb: Math.round(target.logBytes() / 2 ** 20),
      failures: 0,
    }),
  );
  if (baseline !== undefined && last !== undefined && last.heapMb - baseline.heapMb > HEAP_GROWTH_MB) {
    console.error(`heap grew ${(last.heapMb - baseline.heapMb).toFixed(1)} MB over the run`);
    process.exitCode = 1;
  }
} catch (error) {
  console.error((error as Error).message);
  console.log(JSON.stringify({ cases: done, seed, failures: 1 }));
  process.exitCode = 1;
} finally {
  await target.stop();
}
