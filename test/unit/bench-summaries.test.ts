// The bench's summaries of what it measured: latencies at µs resolution (test/bench/latency.mjs), and the line that
// says why a part was not measured (test/bench/report.mjs).
import t from 'tap';
import { latencySummary } from '../bench/latency.mjs';
import { failureLine } from '../bench/report.mjs';

const oneToHundred = Array.from({ length: 100 }, (_, i) => 100 - i);
const LATENCIES = [
  { name: 'none', ms: [], expected: { p50: 0, p99: 0, p999: 0, max: 0, mean: 0 } },
  { name: '1..100 ms, in any order', ms: oneToHundred, expected: { p50: 51, p99: 100, p999: 100, max: 100, mean: 50.5 } },
  {
    name: 'fractions kept to the µs',
    ms: [13.4567, 13.0004],
    expected: { p50: 13.457, p99: 13.457, p999: 13.457, max: 13.457, mean: 13.229 },
  },
  {
    name: 'one slow answer in 1,000 shows at p99.9, not at p99',
    ms: [...Array.from({ length: 999 }, () => 2), 200],
    expected: { p50: 2, p99: 2, p999: 200, max: 200, mean: 2.198 },
  },
];
for (const { name, ms, expected } of LATENCIES) t.same(latencySummary([...ms]), expected, name);

const FAILURES = [
  {
    name: 'an unhandled error: the error, not the stack frame above it',
    output:
      "node:events:505\n    throw er; // Unhandled 'error' event\n    ^\n\nError: spawn etcd ENOENT\n    at ChildProcess._handle.onexit",
    expected: 'Error: spawn etcd ENOENT',
  },
  {
    name: 'a typed error',
    output: 'TypeError: x is not a function\n    at y (z.js:1:1)',
    expected: 'TypeError: x is not a function',
  },
  {
    name: 'a message of its own: its first line',
    output: 'cluster-mode: kube-apiserver did not become ready in 60 s\nits log follows',
    expected: 'cluster-mode: kube-apiserver did not become ready in 60 s',
  },
];
for (const { name, output, expected } of FAILURES) t.equal(failureLine(output), expected, name);
