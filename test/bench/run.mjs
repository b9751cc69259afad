// npm run bench: throughput, latency, CPU and memory of the built server against a bare HTTPS ceiling, start
// to ready, and default-class scaling. Loopback only, bounded in time. Writes docs/benchmarks.{md,json}.
//   --smoke       a few seconds, one run, no cluster mode; prints `bench: N passed, N failed` (used by CI)
//   --runs N      runs per figure (default 5; figures are medians, with min and max)
//   --duration S  seconds per load run (default 5)
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareWork, requestMix } from './mix.mjs';
import { instructionsPerRequest } from './instructions.mjs';
import { decisionP99 } from './scaling.mjs';
import { cpuSeconds, ROOT, rssMb, runLoad, startServer } from './servers.mjs';
import { writeReport } from './report.mjs';
import { check, summary } from '../helpers/checks.mjs';

const { values } = parseArgs({ options: { smoke: { type: 'boolean' }, runs: { type: 'string' }, duration: { type: 'string' } } });
const smoke = values.smoke === true;
const runs = Number(values.runs ?? (smoke ? 1 : 5));
const duration = Number(values.duration ?? (smoke ? 2 : 5));
const WARM_UP_S = smoke ? 1 : 3;
const { work, certs, classes, classText } = prepareWork('sw-bench-');
const deadline = setTimeout(() => {
  console.error('bench: over its time limit');
  process.exit(1);
}, 20 * 60_000);
deadline.unref();

const bodies = join(work, 'bodies.json');
writeFileSync(bodies, JSON.stringify(requestMix()));
const log = join(work, 'server.log');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function measure(kind, extraArgs = []) {
  const server = await startServer(kind, { certs, classes, logFile: log, extraArgs });
  try {
    // Warm-up: V8 was still optimizing our code 1 s into the load (the compiler thread used 11 µs of CPU per
    // request in the measured window, measured with perf); by 3 s it is done, as in a server that has run a while.
    await runLoad({ url: server.url, ca: certs.ca, bodies, connections: 16, duration: WARM_UP_S });
    const cpu0 = cpuSeconds(server.pid);
    const saturation = await runLoad({ url: server.url, ca: certs.ca, bodies, connections: 16, duration });
    const cpu = cpuSeconds(server.pid) - cpu0;
    const fixed = await runLoad({ url: server.url, ca: certs.ca, bodies, connections: 10, duration, rate: 1000 });
    return { saturation, fixed, cpuUsPerRequest: (cpu * 1e6) / saturation.requests };
  } finally {
    await server.stop();
  }
}

// Each run measures the three servers back to back, in an order that rotates from run to run, and the ratios
// are taken within a run: the machine's speed drifts by more than the differences measured here, so a ratio
// of two medians taken minutes apart would mostly measure the drift.
const VARIANTS = [
  ['ceiling', 'ceiling', []],
  ['ours', 'ours', []],
  ['oursNoLog', 'ours', ['--log-level=warn']],
];
const series = { ours: [], ceiling: [], oursNoLog: [] };
for (let run = 0; run < runs; run++) {
  for (let i = 0; i < VARIANTS.length; i++) {
    const [name, kind, args] = VARIANTS[(i + run) % VARIANTS.length];
    series[name].push(await measure(kind, args));
  }
  console.error(
    `run ${run + 1}/${runs}: ours ${Math.round(series.ours.at(-1).saturation.rps)} rps, ceiling ${Math.round(series.ceiling.at(-1).saturation.rps)} rps, ours without info logs ${Math.round(series.oursNoLog.at(-1).saturation.rps)} rps`,
  );
}
const rpsOf = (name, i) => series[name][i].saturation.rps;
const paired = {
  oursOverCeiling: spread(series.ours.map((_, i) => rpsOf('ours', i) / rpsOf('ceiling', i))),
  loggingCost: spread(series.ours.map((_, i) => 1 - rpsOf('ours', i) / rpsOf('oursNoLog', i))),
  cpuOursOverCeiling: spread(series.ours.map((m, i) => m.cpuUsPerRequest / series.ceiling[i].cpuUsPerRequest)),
  // The same two figures from server CPU per request, which the host's varying share of the CPU disturbs less:
  // a server that saturates one core answers 1/(CPU per request) requests per second.
  cpuCeilingOverOurs: spread(series.ours.map((m, i) => series.ceiling[i].cpuUsPerRequest / m.cpuUsPerRequest)),
  loggingCostCpu: spread(series.ours.map((m, i) => 1 - series.oursNoLog[i].cpuUsPerRequest / m.cpuUsPerRequest)),
};
const summarise = (list) => ({
  rps: spread(list.map((m) => m.saturation.rps)),
  saturation: {
    p50: spread(list.map((m) => m.saturation.latency.p50)),
    p99: spread(list.map((m) => m.saturation.latency.p99)),
    p999: spread(list.map((m) => m.saturation.latency.p999)),
  },
  fixed1000: {
    rps: spread(list.map((m) => m.fixed.rps)),
    p50: spread(list.map((m) => m.fixed.latency.p50)),
    p99: spread(list.map((m) => m.fixed.latency.p99)),
    p999: spread(list.map((m) => m.fixed.latency.p999)),
  },
  cpuUsPerRequest: spread(list.map((m) => m.cpuUsPerRequest)),
  errors: list.reduce(
    (n, m) => n + m.saturation.errors + m.saturation.timeouts + m.saturation.non2xx + m.fixed.errors + m.fixed.non2xx,
    0,
  ),
});
const results = {
  ours: summarise(series.ours),
  ceiling: summarise(series.ceiling),
  oursNoLog: summarise(series.oursNoLog),
  paired,
};

// Memory and start-up of a fresh standalone server; start to ready also with only the fixtures' few classes,
// and for the bare ceiling (what Node itself takes to be ready by the same measure on this machine).
const startups = [];
const startupsFewClasses = [];
const startupsCeiling = [];
const startupsNoCodeCache = [];
const idle = [];
const afterLoad = [];
const fewClasses = join(ROOT, 'test/fixtures/classes');
// The same bundle without its V8 code cache, to show what the cache is worth in the same run.
const noCodeCache = join(work, 'bundle-without-code-cache');
cpSync(join(ROOT, 'dist/bundle'), noCodeCache, { recursive: true });
rmSync(join(noCodeCache, 'snapshot-webhook.js.cache'));
const startToReady = async (kind, options, into) => {
  const server = await startServer(kind, { certs, logFile: log, ...options });
  into.push(server.readyMs);
  await server.stop();
};
for (let run = 0; run < runs; run++) {
  // Start to ready is quick to sample and noisy on a shared machine: three samples of each per run.
  for (let sample = 0; sample < 3; sample++) {
    await startToReady('ceiling', {}, startupsCeiling);
    await startToReady('ours', { classes: fewClasses }, startupsFewClasses);
    await startToReady('ours', { classes: fewClasses, main: join(noCodeCache, 'main.js') }, startupsNoCodeCache);
  }
  const server = await startServer('ours', { certs, classes, logFile: log });
  startups.push(server.readyMs);
  await new Promise((r) => setTimeout(r, 1000));
  idle.push(rssMb(server.pid));
  const amount = smoke ? 5_000 : 100_000;
  await runLoad({ url: server.url, ca: certs.ca, bodies, connections: 16, amount });
  afterLoad.push(rssMb(server.pid));
  await server.stop();
}
const memory = {
  standaloneIdleMb: spread(idle),
  standaloneAfterLoadMb: spread(afterLoad),
  loadRequests: smoke ? 5_000 : 100_000,
  standaloneStartToReadyMs: spread(startups),
  classCount: classText.split(/^kind: /m).length - 1,
  standaloneFewClassesStartToReadyMs: spread(startupsFewClasses),
  fewClassCount: readFileSync(join(fewClasses, 'classes.yaml'), 'utf8').split(/^kind: /m).length - 1,
  ceilingStartToReadyMs: spread(startupsCeiling),
  noCodeCacheFewClassesStartToReadyMs: spread(startupsNoCodeCache),
};

const scaling = Object.fromEntries([10, 1000, 10000].map((n) => [n, decisionP99(n, smoke ? 2000 : 20_000)]));

// Instructions per request (callgrind): the figure the machine's noise moves least. Once each: repeats of the
// same build moved a few percent, far less than its timing (docs/benchmarks.md). Full runs only, with valgrind.
let instructions;
if (!smoke && spawnSync('valgrind', ['--version']).status === 0) {
  const count = { warm: 12_000, requests: 2_000, work, certs, classes, bodies: requestMix() };
  const ceiling = await instructionsPerRequest({ kind: 'ceiling', ...count });
  const ours = await instructionsPerRequest({ kind: 'ours', ...count });
  const oursNoLog = await instructionsPerRequest({ kind: 'ours', extraArgs: ['--log-level=warn'], ...count });
  instructions = { warm: count.warm, requests: count.requests, ceiling, ours, oursNoLog };
}

let cluster;
if (!smoke) {
  const loader = `file://${ROOT}node_modules/@tapjs/typescript/dist/esm/import.mjs`;
  const clusterRuns = String(Math.min(runs, 3));
  const run = spawnSync(process.execPath, [`--import=${loader}`, `${ROOT}test/bench/cluster-mode.ts`, clusterRuns], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  cluster = line ? JSON.parse(line) : { error: (run.stderr || run.stdout).slice(-2000) };
}

const machine = {
  cores: cpus().length,
  cpu: cpus()[0]?.model,
  node: process.version,
  date: new Date().toISOString().slice(0, 10),
};
const report = {
  machine,
  command: `npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  runs,
  durationSeconds: duration,
  results,
  memory,
  scaling,
  instructions,
  cluster,
};
rmSync(work, { recursive: true, force: true });

if (smoke) {
  check(
    results.ours.errors === 0 && results.ceiling.errors === 0,
    `no errors, timeouts or non-2xx answers (ours ${results.ours.errors}, ceiling ${results.ceiling.errors})`,
  );
  check(
    results.ours.rps.median > 0 && results.ceiling.rps.median > 0,
    `both servers answered (ours ${Math.round(results.ours.rps.median)} rps, ceiling ${Math.round(results.ceiling.rps.median)} rps)`,
  );
  check(memory.standaloneIdleMb.median > 0, `memory measured (idle ${memory.standaloneIdleMb.median} MB)`);
  check(
    Object.values(scaling).every((s) => s.p99us > 0),
    'default-class scaling measured',
  );
  process.exit(summary('bench'));
}
writeReport(report);
console.log(
  JSON.stringify(
    { ratio: round(paired.oursOverCeiling.median), loggingCost: round(paired.loggingCost.median), ...memory },
    null,
    2,
  ),
);
