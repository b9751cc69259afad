// npm run bench:budget: how much work per request a Node webhook can do and still meet the saturation targets.
// The bare Node HTTPS server is run again with W µs of busy CPU per request added (bare-https.mjs WORK_US), for
// several W, in the same run as ours (as the Deployment runs it) and upstream (the peer), all at the same keep-alive
// connection count, in rotating order. It prints each server's requests/s and CPU per request, and where the
// bare server's throughput and p99 at saturation cross the targets: that W is the budget for everything a webhook
// adds to the floor (routing, rules, a log line, metrics, the garbage they leave). Ours is placed on the same curve,
// and so is the libraries floor (libraries-https.mjs: fastify, pino and prom-client as ours uses them, none of ours'
// own code), with every server's start to ready, and so are the floor's first two rungs: fastify alone, and fastify
// with pino's line, to see on which rung each target is lost. The bare server, the libraries floor, ours and
// upstream are also loaded at 1,000 requests/s after their saturation run, as `npm run bench` does, for the p99
// target at that rate.
// Writes the budget part of docs/benchmarks.md. Loopback only, in a private network namespace, bounded in time.
//   --works LIST     µs of work per request to add to the bare server (default 5,10,15,20,30; 0 is always run)
//   --runs N         rounds (default 3); --duration S seconds per load run (default 5)
//   --connections N  keep-alive connections (default 100: where `npm run bench` found upstream saturated here)
//   --smoke          one short round at 10 connections with 400 µs of work, docs left alone; prints
//                    `bench:budget: N passed, N failed`. 400 µs is several times the bare server's own time per
//                    request even when the machine is slow: 100 µs was hidden once, in a CI run whose bare + 0 used
//                    172.5 µs of CPU per request (about 80 when quiet) and bare + 100 167.7
import { readFileSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { check, summary } from '../helpers/checks.mjs';
import { reexecInNetns } from '../helpers/netns.mjs';
import { startBench } from './bench-setup.mjs';
import { countClasses, FIXTURE_CLASSES } from './mix.mjs';
import { commandLine, replaceBlock } from './report.mjs';
import { bundleLibrariesFloor, gcsPerThousand, loadWithCpu, runLoad, SERVER_LABELS, startServer } from './servers.mjs';

const { values } = parseArgs({
  options: {
    works: { type: 'string' },
    runs: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    smoke: { type: 'boolean' },
  },
});
reexecInNetns((why) => {
  check(false, why);
  summary('bench:budget');
});

const smoke = values.smoke === true;
// 0 is always measured: the bare server itself is the reference of every ratio to it.
const works = [...new Set([0, ...(values.works ?? (smoke ? '400' : '5,10,15,20,30')).split(',').map(Number)])].sort(
  (a, b) => a - b,
);
const runs = Number(values.runs ?? (smoke ? 1 : 3));
const duration = Number(values.duration ?? (smoke ? 1 : 5));
const connections = Number(values.connections ?? (smoke ? 10 : 100));
const WARM_UP_S = smoke ? 1 : 3;
const { work, certs, classes, classText, bodies, logFile, upstream, fake } = await startBench('bench:budget', 'sw-budget-');
const classCount = countClasses(classText);
const fixtureClassCount = countClasses(readFileSync(FIXTURE_CLASSES, 'utf8'));

const librariesMain = await bundleLibrariesFloor(work);

const SERVERS = {
  ours: { kind: 'ours', classes },
  upstream: { kind: 'upstream', kubeconfig: fake.kubeconfig, upstream },
  fastify: { kind: 'libraries', main: librariesMain, layers: 'fastify' },
  'fastify+pino': { kind: 'libraries', main: librariesMain, layers: 'fastify+pino' },
  libraries: { kind: 'libraries', main: librariesMain },
  ...Object.fromEntries(works.map((w) => [`bare+${w}`, { kind: 'bare', workUs: w }])),
};
const NAMES = Object.keys(SERVERS);
/** The servers also loaded at the fixed rate: the two floors, ours and the peer (the curve's steps are for throughput). */
const AT_FIXED_RATE = new Set(['ours', 'upstream', 'libraries', 'bare+0']);

async function measure(name) {
  const server = await startServer(SERVERS[name].kind, { certs, logFile, ...SERVERS[name], traceGc: true });
  try {
    const load = { url: server.url, ca: certs.ca, bodies, connections };
    // As `npm run bench` measures it: one load on the same keep-alive connections, warmed up, then measured.
    const result = await loadWithCpu(server.pid, { ...load, warmup: WARM_UP_S, duration }, () => server.gcs());
    const gcs = gcsPerThousand(result.atWindow, server.gcs(), result.requests);
    // As `npm run bench` measures it: after the saturation run, 10 connections, open loop.
    const fixed = AT_FIXED_RATE.has(name) ? await runLoad({ ...load, connections: 10, duration, rate: 1000 }) : undefined;
    return {
      readyMs: server.readyMs,
      rps: result.rps,
      cpuUs: result.cpuUsPerRequest,
      mainUserUs: result.mainUserUs,
      mainSystemUs: result.mainSystemUs,
      p99Ms: result.latency.p99,
      fixedP99Ms: fixed?.latency.p99,
      gcs,
      failures: [result, ...(fixed ? [fixed] : [])].reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
    };
  } finally {
    await server.stop();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const rounds = [];
for (let run = 0; run < runs; run++) {
  const order = NAMES.map((_, i) => NAMES[(i + run) % NAMES.length]);
  const round = {};
  for (const name of order) round[name] = await measure(name);
  rounds.push(round);
  console.log(`round ${run + 1}: ${NAMES.map((n) => `${n} ${Math.round(round[n].rps)}`).join(', ')} requests/s`);
}
await fake.close();
rmSync(work, { recursive: true, force: true });

/** Median over the rounds of a figure taken within each round. */
const within = (f) => median(rounds.map(f));
/** The ratios taken within a round: the table gives their median over the rounds, and some lines their min–max. */
const RATIOS = {
  overUpstream: (r, name) => r[name].rps / r.upstream.rps,
  overBare: (r, name) => r[name].rps / r['bare+0'].rps,
  p99OverUpstream: (r, name) => r[name].p99Ms / r.upstream.p99Ms,
  fixedOverUpstream: (r, name) => r[name].fixedP99Ms / r.upstream.fixedP99Ms,
  readyOverBare: (r, name) => r[name].readyMs / r['bare+0'].readyMs,
};
const ratio = (key, name) => within((r) => RATIOS[key](r, name));
const rows = NAMES.map((name) => ({
  name,
  rps: within((r) => r[name].rps),
  overUpstream: ratio('overUpstream', name),
  overBare: ratio('overBare', name),
  cpuUs: within((r) => r[name].cpuUs),
  young: within((r) => r[name].gcs.young),
  full: within((r) => r[name].gcs.full),
  mainUserUs: within((r) => r[name].mainUserUs),
  mainSystemUs: within((r) => r[name].mainSystemUs),
  p99Ms: within((r) => r[name].p99Ms),
  p99OverUpstream: ratio('p99OverUpstream', name),
  fixedP99Ms: AT_FIXED_RATE.has(name) ? within((r) => r[name].fixedP99Ms) : undefined,
  fixedOverUpstream: AT_FIXED_RATE.has(name) ? ratio('fixedOverUpstream', name) : undefined,
  readyMs: within((r) => r[name].readyMs),
  readyOverBare: ratio('readyOverBare', name),
  // Each connection waits for one answer at a time, so a server's mean wait is connections / requests/s (Little's
  // law); this is its p99 over that mean.
  tail: within((r) => (r[name].p99Ms * r[name].rps) / (1000 * connections)),
  failures: Math.max(...rounds.map((r) => r[name].failures)),
}));
const bareRows = rows.filter((r) => r.name.startsWith('bare+')).map((r, i) => ({ ...r, work: works[i] }));

/**
 * The work at which the bare server's `ratio` first reaches `value` as work grows (the rows are in order of work), by
 * linear interpolation: a throughput ratio falls to it (`rising` false), a latency ratio rises to it. 0 when it
 * starts there, undefined past the last row.
 */
function workWhere(ratio, value, rising = false) {
  const reached = (r) => (rising ? r[ratio] >= value : r[ratio] <= value);
  if (reached(bareRows[0])) return 0;
  for (let i = 1; i < bareRows.length; i++) {
    const [a, b] = [bareRows[i - 1], bareRows[i]];
    if (reached(b)) return a.work + ((a[ratio] - value) / (a[ratio] - b[ratio])) * (b.work - a.work);
  }
  return undefined;
}

/** Where the bare server's ratio passes a target's bound (a floor, or with `rising` a ceiling), in words. */
function workAt(ratio, bound, rising = false) {
  const missed = rising ? bareRows[0][ratio] > bound : bareRows[0][ratio] < bound;
  if (missed) return `below ${bareRows[0].work} µs (the bare server itself misses it)`;
  const w = workWhere(ratio, bound, rising);
  return w === undefined ? `over ${works.at(-1)} µs` : `about ${Math.round(w)} µs`;
}
/** The work added to the bare server at which it answers like `name`, in words. */
function answersLike(name) {
  const w = workWhere('overBare', row(name).overBare);
  return w === undefined ? `more than ${works.at(-1)} µs` : `about ${Math.round(w)} µs`;
}

/** Whether the bare server's throughput fell at each step of work, as the reading off its curve assumes. */
const steady = bareRows.every((r, i) => i === 0 || r.rps <= bareRows[i - 1].rps);
/** A bare server with work added counts its loop steps for 200 ms before it listens: its start is not the floor's. */
const calibrates = (name) => name.startsWith('bare+') && name !== 'bare+0';
const row = (name) => rows.find((r) => r.name === name);
/** A server's ratio (a key of RATIOS): its median, with its min–max over the rounds. */
function spread(key, name) {
  const ratios = rounds.map((r) => RATIOS[key](r, name));
  return `${f2(row(name)[key])}× (${f2(Math.min(...ratios))}–${f2(Math.max(...ratios))})`;
}
/** The floor's rungs, each with the libraries it uses. */
const RUNGS = { fastify: 'fastify alone', 'fastify+pino': 'fastify + pino', libraries: 'fastify + pino + prom-client' };
/** What a rung of the floor reaches against the targets, in words. */
const rung = (name) =>
  `${RUNGS[name]}: throughput ${spread('overBare', name)} the bare server's, p99 ${spread('p99OverUpstream', name)} upstream's, start to ready ${spread('readyOverBare', name)} the bare server's`;
/**
 * p99 at saturation over the mean wait, per server. Where the Node servers' figures are about the same (the line
 * gives their spread), a Node server's p99 against upstream's follows its throughput against upstream's, and the
 * p99 target asks for the throughput this line names.
 */
function tails() {
  const node = rows.filter((r) => r.name !== 'upstream').map((r) => r.tail);
  const needed = (2 * row('ours').tail) / row('upstream').tail;
  return `p99 at saturation over the mean wait (connections ÷ requests/s), medians over the rounds: upstream ${f2(row('upstream').tail)}; the Node servers ${f2(Math.min(...node))}–${f2(Math.max(...node))} (ours ${f2(row('ours').tail)}, the libraries floor ${f2(row('libraries').tail)}, the bare server ${f2(row('bare+0').tail)}). With ours' multiple, p99 ≤ 0.5× upstream's would take throughput ≥ ${f2(needed)}× upstream's.`;
}
const f1 = (x) => String(Math.round(x * 10) / 10);
const f2 = (x) => String(Math.round(x * 100) / 100);
const lines = [
  `Machine: ${cpus().length} cores (${cpus()[0]?.model}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. Command: \`${commandLine('bench:budget')}\`. ${connections} keep-alive connections, ${runs} rounds of ${duration} s per server (counted after ${WARM_UP_S} s of warm-up on the same connections) in rotating order; medians of the ratios taken within each round.`,
  '',
  '| server | requests/s | / upstream | / bare | p99 (ms) | p99 / upstream | p99 at 1,000/s (ms) | / upstream | CPU per request, all threads (µs) | main thread user / system (µs) | collections per 1,000 requests, young / full | start to ready (ms) | / bare | failed |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${SERVER_LABELS[r.name] ?? `bare + ${r.name.slice(5)} µs of work`} | ${Math.round(r.rps)} | ${f2(r.overUpstream)} | ${f2(r.overBare)} | ${f1(r.p99Ms)} | ${f2(r.p99OverUpstream)} | ${r.fixedP99Ms === undefined ? '— | —' : `${f2(r.fixedP99Ms)} | ${f2(r.fixedOverUpstream)}`} | ${f1(r.cpuUs)} | ${r.name === 'upstream' ? '— (Go spreads the work over its threads)' : `${f1(r.mainUserUs)} / ${f1(r.mainSystemUs)}`} | ${f1(r.young)} / ${f1(r.full)} | ${calibrates(r.name) ? '— (counts its loop at start) | —' : `${Math.round(r.readyMs)} | ${f2(r.readyOverBare)}`} | ${r.failures} |`,
  ),
  '',
  ...(steady
    ? []
    : [
        `In this run the bare server's throughput did not fall at every step of added work (${bareRows.map((r) => `${r.work} µs: ${Math.round(r.rps)}`).join(', ')} requests/s): the machine's noise was larger than the steps, and the figures read off that curve below are not reliable.`,
        '',
      ]),
  `Work a webhook may add to the bare server: for throughput ≥ 0.85× the bare server's, ${workAt('overBare', 0.85)}; for ≥ 1.1× upstream's, ${workAt('overUpstream', 1.1)}; for p99 at saturation ≤ 0.5× upstream's, ${workAt('p99OverUpstream', 0.5, true)}. Ours answers like the bare server with ${answersLike('ours')} of work added; the libraries floor, with ${answersLike('libraries')}. Start to ready (target ≤ 1.5× the bare server's): the libraries floor ${f2(row('libraries').readyOverBare)}×, ours ${f2(row('ours').readyOverBare)}× (here with the bench's ${classCount} classes read from YAML; \`npm run bench\` measures ours' start with the fixtures' ${fixtureClassCount}). p99 at 1,000 requests/s (target ≤ 1× upstream's; the ratio's spread over the rounds in brackets): the bare server ${spread('fixedOverUpstream', 'bare+0')}, the libraries floor ${spread('fixedOverUpstream', 'libraries')}, ours ${spread('fixedOverUpstream', 'ours')}.`,
  '',
  tails(),
  '',
  `The floor by rungs, each against the targets of throughput ≥ 0.85× the bare server's, p99 at saturation ≤ 0.5× upstream's and start to ready ≤ 1.5× the bare server's (median, and min–max over the rounds): ${Object.keys(RUNGS).map(rung).join('; ')}.`,
];
console.log(lines.join('\n'));
if (!smoke) replaceBlock('budget', lines);
for (const r of rows) check(r.failures === 0 && r.rps > 0, `${r.name}: answered, with no errors, timeouts or non-2xx answers`);
// The work is real: the bare server with work added does fewer requests per second than without.
check(bareRows.at(-1).rps < bareRows[0].rps, `bare + ${works.at(-1)} µs answers fewer requests/s than bare + ${works[0]} µs`);
process.exit(summary('bench:budget'));
