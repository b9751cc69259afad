// npm run bench: ours against the upstream Go webhook it replaces (the peer), in one run, with the same requests
// from the same load process; a bare Node HTTPS server is the floor for memory and start-up. Loopback only, in
// a private network namespace (the upstream webhook listens on every interface), bounded in time. Writes
// docs/benchmarks.{md,json}.
//   --smoke          a few seconds, one run, no cluster mode; prints `bench: N passed, N failed` (used by CI)
//   --runs N         runs per figure (default 5; figures are medians, with min and max)
//   --duration S     seconds per load run (default 5)
//   --connections N  keep-alive connections at saturation (default: from 50, doubled while upstream answers
//                    more than 5% more with twice as many; the report shows the steps)
//   --before DIR     also measure an earlier build: DIR/dist/bundle/main.js, run by --before-node (default `node`)
//                    with --before-node-options (default: the Deployment's NODE_OPTIONS and GLIBC_TUNABLES; given,
//                    that NODE_OPTIONS alone); `--before .` with other NODE_OPTIONS compares settings in one run
//   --profiles       only the runtime profiles of one node against the cluster's (profiles.mjs), in cluster mode
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { check, summary } from '../helpers/checks.mjs';
import { reexecInNetns } from '../helpers/netns.mjs';
import { startBench } from './bench-setup.mjs';
import { commandLine, r1, writeReport } from './report.mjs';
import { countClasses, FIXTURE_CLASSES } from './mix.mjs';
import { decisionP99 } from './scaling.mjs';
import {
  gcsPerThousand,
  loadWithCpu,
  deploymentArgs,
  deploymentEnv,
  deploymentNodeOptions,
  memoryLimitMb,
  peakRssMb,
  ROOT,
  rssMb,
  runLoad,
  startServer,
} from './servers.mjs';

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean' },
    runs: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    before: { type: 'string' },
    'before-node': { type: 'string' },
    'before-node-options': { type: 'string' },
    profiles: { type: 'boolean' },
  },
});

// The whole bench runs in a network namespace of its own, where only loopback exists.
reexecInNetns((why) => {
  check(false, why);
  summary('bench');
});

if (values.profiles === true) {
  const { runProfiles } = await import('./profiles.mjs');
  console.log(
    runProfiles(Number(values.runs ?? 3), [
      { name: 'old space 40 MB, semi-space 1 MB', env: { NODE_OPTIONS: '--max-old-space-size=40 --max-semi-space-size=1' } },
    ]),
  );
  process.exit(0);
}

const smoke = values.smoke === true;
const runs = Number(values.runs ?? (smoke ? 1 : 5));
const duration = Number(values.duration ?? (smoke ? 2 : 5));
const WARM_UP_S = smoke ? 1 : 3;
const { work, certs, classes, classText, bodies, matchedBodies, logFile, upstream, peerMissing, fake } = await startBench(
  'bench',
  'sw-bench-',
);

/** Every server measured, with how it starts. `upstream` when its binary was found; `before` only when asked for. */
const SERVERS = {
  ours: { kind: 'ours', classes },
  ...(upstream === undefined ? {} : { upstream: { kind: 'upstream', kubeconfig: fake.kubeconfig, upstream } }),
  bare: { kind: 'bare' },
  ...(values.before === undefined
    ? {}
    : {
        before: {
          kind: 'ours',
          classes,
          main: join(values.before, 'dist/bundle/main.js'),
          node: values['before-node'] ?? 'node',
          // An earlier runtime setting: that NODE_OPTIONS and none of the Deployment's other settings (GLIBC_TUNABLES).
          ...(values['before-node-options'] === undefined
            ? {}
            : { env: { NODE_OPTIONS: values['before-node-options'], GLIBC_TUNABLES: '' } }),
        },
      }),
};
const NAMES = Object.keys(SERVERS);
/** Starts a server of SERVERS by name; `more` adds or overrides start options. */
const start = (name, more = {}) => startServer(SERVERS[name].kind, { certs, logFile, ...SERVERS[name], ...more });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** A load run, and the server's CPU per request over it (all threads and the kernel: /proc/PID/stat). */
async function measureLoad(name) {
  // Each collection logged (--trace-gc; Go: gctrace), to count them over the saturation run.
  const server = await start(name, { traceGc: true });
  try {
    const load = { url: server.url, ca: certs.ca, bodies };
    // One load on the same keep-alive connections: warmed up, then measured (load.mjs).
    const saturation = await loadWithCpu(server.pid, { ...load, connections: CONNECTIONS, warmup: WARM_UP_S, duration }, () =>
      server.gcs(),
    );
    const gcs = gcsPerThousand(saturation.atWindow, server.gcs(), saturation.requests);
    const peakMb = peakRssMb(server.pid);
    const fixed = await runLoad({ ...load, connections: 10, duration, rate: 1000 });
    // The traffic 1.30+ sends through the shipped matchConditions: contents and the class writes that make a default.
    const matchedLoad = { ...load, bodies: matchedBodies, connections: CONNECTIONS };
    const matched = await loadWithCpu(server.pid, { ...matchedLoad, warmup: WARM_UP_S, duration });
    return {
      saturation,
      fixed,
      matched,
      gcs,
      peakRssMb: peakMb,
      rssAfterLoadMb: rssMb(server.pid),
    };
  } finally {
    await server.stop();
  }
}

/**
 * Start to ready and idle memory, standalone with the fixtures' classes (what `npm start` serves). Parsing the
 * bench's 204 classes from YAML at start leaves about 20 MB of V8 compiler memory behind (the `yaml` parser's
 * code gets optimized while it reads them); a cluster's classes arrive as JSON from the informers instead. That
 * figure is measured too (`ours204`), for ours only.
 */
const FEW_CLASSES = join(ROOT, 'test/fixtures/classes');
async function measureStart(name, classesFrom = FEW_CLASSES) {
  const server = await start(name, { classes: classesFrom });
  try {
    await new Promise((r) => setTimeout(r, 1000));
    return { readyMs: server.readyMs, idleMb: rssMb(server.pid) };
  } finally {
    await server.stop();
  }
}

/**
 * How many connections saturate upstream (the bare server without a peer): from 50 (or --connections), doubled while
 * twice as many connections get it more than 5% more requests/s, up to 400. Every server is then loaded with that many.
 */
async function saturationCheck(from) {
  const server = await start(upstream === undefined ? 'bare' : 'upstream');
  try {
    const load = { url: server.url, ca: certs.ca, bodies };
    const rps = async (connections) => (await runLoad({ ...load, connections, warmup: WARM_UP_S, duration })).rps;
    const steps = [{ connections: from, rps: await rps(from) }];
    while (steps.at(-1).connections < 400) {
      const connections = steps.at(-1).connections * 2;
      steps.push({ connections, rps: await rps(connections) });
      if (steps.at(-1).rps <= steps.at(-2).rps * 1.05) break;
    }
    const last = steps.at(-1);
    const chosen = steps.length > 1 && last.rps <= steps.at(-2).rps * 1.05 ? steps.at(-2) : last;
    return { steps, connections: chosen.connections };
  } finally {
    await server.stop();
  }
}
const saturated = smoke || values.connections !== undefined ? undefined : await saturationCheck(50);
const CONNECTIONS = saturated?.connections ?? Number(values.connections ?? 50);
console.error(
  `saturation: ${CONNECTIONS} connections${saturated ? ` (${saturated.steps.map((s) => `${s.connections}: ${Math.round(s.rps)} rps`).join(', ')})` : ''}`,
);

// Each run measures every server back to back, in an order that rotates from run to run, and ratios are taken
// within a run: the machine's speed drifts by more than some differences measured here.
const load = Object.fromEntries(NAMES.map((n) => [n, []]));
const starts = Object.fromEntries(NAMES.map((n) => [n, []]));
const manyClassesIdle = [];
for (let run = 0; run < runs; run++) {
  for (let i = 0; i < NAMES.length; i++) {
    const name = NAMES[(i + run) % NAMES.length];
    load[name].push(await measureLoad(name));
    // Start to ready is quick to sample and noisy on a shared machine: three samples each per run.
    for (let sample = 0; sample < 3; sample++) starts[name].push(await measureStart(name));
  }
  manyClassesIdle.push((await measureStart('ours', classes)).idleMb);
  console.error(
    `run ${run + 1}/${runs}: ${NAMES.map((n) => `${n} ${Math.round(load[n].at(-1).saturation.rps)} rps`).join(', ')}`,
  );
}
await fake.close();

const summarise = (list, startList) => ({
  rps: spread(list.map((m) => m.saturation.rps)),
  saturation: {
    p50: spread(list.map((m) => m.saturation.latency.p50)),
    p99: spread(list.map((m) => m.saturation.latency.p99)),
    p99WithOpening: spread(list.map((m) => m.saturation.latencyWithOpening.p99)),
  },
  fixed1000: { p50: spread(list.map((m) => m.fixed.latency.p50)), p99: spread(list.map((m) => m.fixed.latency.p99)) },
  cpuUsPerRequest: spread(list.map((m) => m.saturation.cpuUsPerRequest)),
  matched: {
    rps: spread(list.map((m) => m.matched.rps)),
    p50: spread(list.map((m) => m.matched.latency.p50)),
    p99: spread(list.map((m) => m.matched.latency.p99)),
    cpuUsPerRequest: spread(list.map((m) => m.matched.cpuUsPerRequest)),
  },
  gcs: {
    young: spread(list.map((m) => m.gcs.young)),
    full: spread(list.map((m) => m.gcs.full)),
    pauseUs: spread(list.map((m) => m.gcs.pauseUs)),
  },
  peakRssMb: spread(list.map((m) => m.peakRssMb)),
  rssAfterLoadMb: spread(list.map((m) => m.rssAfterLoadMb)),
  idleMb: spread(startList.map((s) => s.idleMb)),
  startToReadyMs: spread(startList.map((s) => s.readyMs)),
  errors: list.reduce(
    (n, m) => n + [m.saturation, m.matched, m.fixed].reduce((k, l) => k + l.errors + l.timeouts + l.non2xx, 0),
    0,
  ),
});
const results = Object.fromEntries(NAMES.map((n) => [n, summarise(load[n], starts[n])]));
results.ours.idleMbManyClasses = spread(manyClassesIdle);
/**
 * A ratio of two servers' figures, taken within each run (start figures: the medians of each run's samples);
 * undefined when one of them was not measured (the peer missing).
 */
const within = (a, b, pick) =>
  load[a] === undefined || load[b] === undefined ? undefined : spread(load[a].map((m, i) => pick(m) / pick(load[b][i])));
const startWithin = (a, b, pick) =>
  spread(
    load[a].map(
      (_, i) => median(starts[a].slice(i * 3, i * 3 + 3).map(pick)) / median(starts[b].slice(i * 3, i * 3 + 3).map(pick)),
    ),
  );
const startDiff = (a, b, pick) =>
  spread(
    load[a].map(
      (_, i) => median(starts[a].slice(i * 3, i * 3 + 3).map(pick)) - median(starts[b].slice(i * 3, i * 3 + 3).map(pick)),
    ),
  );
const ratios = {
  throughputOursOverUpstream: within('ours', 'upstream', (m) => m.saturation.rps),
  throughputOursOverBare: within('ours', 'bare', (m) => m.saturation.rps),
  cpuOursOverUpstream: within('ours', 'upstream', (m) => m.saturation.cpuUsPerRequest),
  cpuOursOverBare: within('ours', 'bare', (m) => m.saturation.cpuUsPerRequest),
  p99SaturationOursOverBare: within('ours', 'bare', (m) => m.saturation.latency.p99),
  peakRssOursOverLimit: spread(load.ours.map((m) => m.peakRssMb / memoryLimitMb())),
  p99SaturationOursOverUpstream: within('ours', 'upstream', (m) => m.saturation.latency.p99),
  p99SaturationWithOpeningOursOverUpstream: within('ours', 'upstream', (m) => m.saturation.latencyWithOpening.p99),
  p99At1000OursOverUpstream: within('ours', 'upstream', (m) => m.fixed.latency.p99),
  startToReadyOursOverBare: startWithin('ours', 'bare', (s) => s.readyMs),
  matched: {
    throughputOursOverUpstream: within('ours', 'upstream', (m) => m.matched.rps),
    throughputOursOverBare: within('ours', 'bare', (m) => m.matched.rps),
    p99OursOverUpstream: within('ours', 'upstream', (m) => m.matched.latency.p99),
    cpuOursOverUpstream: within('ours', 'upstream', (m) => m.matched.cpuUsPerRequest),
  },
  idleMbOursMinusBare: startDiff('ours', 'bare', (s) => s.idleMb),
  ...(values.before === undefined
    ? {}
    : {
        throughputBeforeOverUpstream: within('before', 'upstream', (m) => m.saturation.rps),
        cpuBeforeOverUpstream: within('before', 'upstream', (m) => m.saturation.cpuUsPerRequest),
        peakRssBeforeOverLimit: spread(load.before.map((m) => m.peakRssMb / memoryLimitMb())),
        p99SaturationBeforeOverUpstream: within('before', 'upstream', (m) => m.saturation.latency.p99),
        p99At1000BeforeOverUpstream: within('before', 'upstream', (m) => m.fixed.latency.p99),
        startToReadyBeforeOverBare: startWithin('before', 'bare', (s) => s.readyMs),
      }),
};

const scaling = {};
for (const n of [10, 1000, 10000]) scaling[n] = await decisionP99(n, smoke ? 2000 : 20_000);

let cluster;
if (!smoke) {
  const settings = JSON.stringify({ runs: Math.min(runs, 3), upstream });
  const run = spawnSync(process.execPath, ['--import=tsx', `${ROOT}test/bench/cluster-mode.ts`, settings], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  cluster = line ? JSON.parse(line) : { error: (run.stderr || run.stdout).slice(-2000) };
}
rmSync(work, { recursive: true, force: true });

if (smoke) {
  for (const name of NAMES) {
    check(results[name].errors === 0, `${name}: no errors, timeouts or non-2xx answers (${results[name].errors})`);
    check(results[name].rps.median > 0, `${name}: answered (${Math.round(results[name].rps.median)} rps)`);
    check(
      results[name].matched.rps.median > 0,
      `${name}: answered the matched mix (${Math.round(results[name].matched.rps.median)} rps)`,
    );
    // The window holds the load's last `duration` seconds only: fewer answers than the whole load, over about that time.
    const { requests, requestsWithOpening, duration: seconds } = load[name][0].saturation;
    check(
      requests > 0 && requests < requestsWithOpening && Math.abs(seconds - duration) < 0.5,
      `${name}: the window counted ${requests} of the load's ${requestsWithOpening} answers, over ${r1(seconds)} of its ${duration + WARM_UP_S} s`,
    );
    check(results[name].idleMb.median > 0, `${name}: memory measured (idle ${results[name].idleMb.median} MB)`);
    const { young, full } = results[name].gcs;
    check(
      young.median + full.median > 0,
      `${name}: collections counted (${r1(young.median)} young, ${r1(full.median)} full per 1,000)`,
    );
  }
  check(
    Object.values(scaling).every((s) => s.p99us > 0),
    'default-class scaling measured',
  );
  process.exit(summary('bench'));
}
const report = {
  peer: upstream === undefined ? undefined : 'the upstream snapshot-validation-webhook v7.0.2',
  peerMissing,
  machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version, date: new Date().toISOString().slice(0, 10) },
  command: commandLine('bench'),
  nodeOptions: deploymentNodeOptions(),
  runtimeEnv: deploymentEnv(),
  beforeNodeOptions: values['before-node-options'],
  serveArgs: deploymentArgs({ cert: 'CERT', key: 'KEY' }, 'PORT').join(' '),
  memoryLimitMb: memoryLimitMb(),
  connections: CONNECTIONS,
  saturated,
  runs,
  durationSeconds: duration,
  warmUpSeconds: WARM_UP_S,
  classCount: countClasses(classText),
  fewClassCount: countClasses(readFileSync(FIXTURE_CLASSES, 'utf8')),
  results,
  ratios,
  scaling,
  cluster,
};
writeReport(report);
console.log(JSON.stringify(ratios, null, 2));
