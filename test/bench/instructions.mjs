// npm run bench:instructions: the work each server does per request, counted in instructions rather than timed.
// On a small shared machine one timed run differs from the next by 10–20%, more than the differences between the
// servers' own code; valgrind's callgrind counts the instructions a process runs, the same for the same binary and
// inputs whatever else the machine does. Each server (ours as the Deployment runs it, the libraries floor bundled
// as budget.mjs bundles it, and the bare Node HTTPS server) runs under callgrind with
// counting off; after a warm-up of requests (V8 compiles the hot code), counting is switched on for two loads of
// the bench's mix, N and 2N requests, and the difference of their totals is divided by N. Every thread is counted (valgrind runs them one at a
// time), the kernel is not: the kernel's TLS and socket work is the same for each server, so the ratios here are
// of the work in the process only. The upstream Go webhook is not counted: valgrind 3.19 aborts in Go's runtime
// (runtime.stopm). Writes the instructions part of docs/benchmarks.md. Loopback only, in a private network
// namespace, bounded in time.
//   --runs N         counts per server (default 2), in rotating order; the table shows the median and the range
//   --warm N         requests before counting (default 3000); --count N: the two counted loads are N and 2N
//                    requests (default 2000)
//   --connections N  keep-alive connections (default 50)
//   --dumps DIR      keeps each counted load's callgrind output there (`callgrind_annotate FILE` shows by function
//                    where the instructions went: V8's builtins, its garbage collector, OpenSSL; JIT code is `???`)
//   --smoke          one short count per server, docs left alone; prints `bench:instructions: N passed, N failed`
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { check, summary } from '../helpers/checks.mjs';
import { reexecInNetns } from '../helpers/netns.mjs';
import { prepareWork, requestMix } from './mix.mjs';
import { commandLine, replaceBlock } from './report.mjs';
import { bundleLibrariesFloor, runLoad, SERVER_LABELS, startServer } from './servers.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    warm: { type: 'string' },
    count: { type: 'string' },
    connections: { type: 'string' },
    dumps: { type: 'string' },
    smoke: { type: 'boolean' },
  },
});
reexecInNetns((why) => {
  check(false, why);
  summary('bench:instructions');
});
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  check(false, 'valgrind is installed (Debian package valgrind)');
  process.exit(summary('bench:instructions'));
}

const smoke = values.smoke === true;
const runs = Number(values.runs ?? (smoke ? 1 : 2));
const warm = Number(values.warm ?? (smoke ? 300 : 3000));
const count = Number(values.count ?? (smoke ? 200 : 2000));
const connections = Number(values.connections ?? (smoke ? 10 : 50));
setTimeout(() => {
  console.error('bench:instructions: over its time limit');
  process.exit(1);
}, 45 * 60_000).unref();
const { work, certs, classes } = prepareWork('sw-instructions-');
const bodies = join(work, 'bodies.json');
writeFileSync(bodies, JSON.stringify(requestMix()));
const logFile = join(work, 'server.log');

const librariesMain = await bundleLibrariesFloor(work);

const SERVERS = {
  ours: { kind: 'ours', classes },
  libraries: { kind: 'libraries', main: librariesMain },
  bare: { kind: 'bare' },
};
const NAMES = Object.keys(SERVERS);

/** The total of a callgrind output file: its `summary:` line (or `totals:`), the instructions counted. */
function totalOf(file) {
  const text = readFileSync(file, 'utf8');
  const line = /^(?:summary|totals): (\d+)/m.exec(text);
  if (line === null) throw new Error(`${file}: no totals`);
  return Number(line[1]);
}

/**
 * Instructions per request, one server under callgrind: after `warm` requests, two counted loads of `count` and
 * `2 × count` requests on fresh connections; each load's count includes its connections' TLS handshakes (millions
 * of instructions each), so the difference of the two, over `count`, is the work of a request alone.
 */
async function measure(name) {
  const outDir = join(work, `callgrind-${name}-${Date.now()}`);
  const wrap = ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outDir}.%p`];
  // Under valgrind a process starts and answers 20–50 times slower: its first TLS handshake takes seconds.
  const server = await startServer(SERVERS[name].kind, {
    certs,
    logFile,
    wrap,
    readyTimeoutMs: 300_000,
    readyTryMs: 30_000,
    ...SERVERS[name],
  });
  const control = (...args) => execFileSync('callgrind_control', [...args, String(server.pid)], { stdio: 'ignore' });
  try {
    // A load's first requests wait for every connection's handshake, seconds under valgrind: a request that
    // timed out would be sent again on a new connection, whose handshake would then count as a request's work.
    const load = { url: server.url, ca: certs.ca, bodies, connections, timeout: 120 };
    await runLoad({ ...load, amount: warm });
    control('-i', 'on');
    // Each dump holds what was counted since the one before.
    const short = await runLoad({ ...load, amount: count });
    control('-d');
    const long = await runLoad({ ...load, amount: 2 * count });
    control('-d');
    control('-i', 'off');
    const prefix = `${outDir.slice(work.length + 1)}.${server.pid}.`;
    const files = readdirSync(work)
      .filter((f) => f.startsWith(prefix))
      .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
    if (values.dumps !== undefined) {
      mkdirSync(values.dumps, { recursive: true });
      files.forEach((f, i) =>
        copyFileSync(join(work, f), join(values.dumps, `${name}-${server.pid}-${i === 0 ? 'N' : '2N'}.callgrind`)),
      );
    }
    const dumps = files.map((f) => totalOf(join(work, f)));
    if (dumps.length !== 2) throw new Error(`${name}: ${dumps.length} callgrind dumps, not 2`);
    const [first, second] = dumps;
    return {
      perRequest: (second - first) / (long.requests - short.requests),
      failures: [short, long].reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
    };
  } finally {
    await server.stop();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const rounds = [];
for (let run = 0; run < runs; run++) {
  const round = {};
  for (const name of NAMES.map((_, i) => NAMES[(i + run) % NAMES.length])) round[name] = await measure(name);
  rounds.push(round);
  console.log(
    `round ${run + 1}: ${NAMES.map((n) => `${n} ${Math.round(round[n].perRequest / 100) / 10}k`).join(', ')} instructions per request`,
  );
}
rmSync(work, { recursive: true, force: true });

const k = (x) => `${Math.round(x / 100) / 10}k`;
const rows = NAMES.map((name) => {
  const counts = rounds.map((r) => r[name].perRequest);
  return {
    name,
    median: median(counts),
    range: `${k(Math.min(...counts))}–${k(Math.max(...counts))}`,
    failures: Math.max(...rounds.map((r) => r[name].failures)),
  };
});
const row = (name) => rows.find((r) => r.name === name);
const r2 = (x) => Math.round(x * 100) / 100;

if (smoke) {
  for (const r of rows) {
    check(r.failures === 0, `${r.name}: every counted request answered (${r.failures} failed)`);
    // A count that small would mean counting never switched on; the bare server runs over 100k per request.
    check(r.median > 20_000, `${r.name}: instructions were counted (${k(r.median)} per request)`);
  }
  // Ours runs rules, a log line and metrics on top of the same libraries: it must count more than the bare server.
  check(
    row('ours').median > row('bare').median,
    `ours counts more per request than the bare server (${k(row('ours').median)} against ${k(row('bare').median)})`,
  );
  process.exit(summary('bench:instructions'));
}

const bare = row('bare').median;
const floor = row('libraries').median;
const ours = row('ours').median;
const lines = [
  `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. Command: \`${commandLine('bench:instructions')}\`. ${connections} keep-alive connections; after ${warm} requests, loads of ${count} and ${2 * count} counted, their difference per request; ${runs} counts per server in rotating order.`,
  '',
  '| server | instructions per request, median (range) | / bare | / libraries floor | failed |',
  '| --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${SERVER_LABELS[r.name]} | ${k(r.median)} (${r.range}) | ${r2(r.median / bare)} | ${r2(r.median / floor)} | ${r.failures} |`,
  ),
  '',
  `If throughput fell in proportion to the work in the process, 0.85× the bare server's would allow ${k(bare / 0.85)} per request: the libraries floor counts ${k(floor)} (${r2(floor / bare)}× the bare server's), and ours ${k(ours)}, of which ${k(ours - floor)} is ours' own code over the floor's.`,
];
replaceBlock('instructions', lines);
console.log(lines.join('\n'));
