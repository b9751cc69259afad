// npm run soak -- --minutes M [--rate R]: a steady mixed load on the built server, sampling its RSS, heap,
// event-loop delay and open handles every 10 s from its own /metrics, then 20 s at saturation (100 keep-alive
// connections, as the bench). Prints the samples, a summary, and `soak: N passed, N failed` (no errors; heap and
// handles do not grow beyond noise; RSS under the container limit; a decision line for every request answered,
// none dropped, saturation included).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { classManifests, requestMix } from '../bench/mix.mjs';
import { ROOT, runLoad, startServer } from '../bench/servers.mjs';
import { check, summary as countsLine } from '../helpers/checks.mjs';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '1' }, rate: { type: 'string', default: '300' } },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const SAMPLE_S = 10;
const work = mkdtempSync(join(tmpdir(), 'sw-soak-'));
execFileSync(process.execPath, [`${ROOT}dist/certs/ensure-dev-certs.js`, join(work, 'certs')], { stdio: 'ignore' });
const certs = { cert: join(work, 'certs/tls.crt'), key: join(work, 'certs/tls.key'), ca: join(work, 'certs/ca.crt') };
writeFileSync(join(work, 'classes.yaml'), classManifests());
writeFileSync(join(work, 'bodies.json'), JSON.stringify(requestMix()));
const ca = readFileSync(certs.ca);

function scrape(port) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', ca, servername: 'localhost', agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const get = (name) => Number(new RegExp(`^snapshot_webhook_${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1]);
        resolve({
          rssMb: Math.round(get('process_resident_memory_bytes') / 1e5) / 10,
          heapUsedMb: Math.round(get('nodejs_heap_size_used_bytes') / 1e5) / 10,
          eventLoopP99Ms: Math.round(get('nodejs_eventloop_lag_p99_seconds') * 1e4) / 10,
          handles: get('nodejs_active_handles_total'),
          logLinesDropped: get('log_lines_dropped_total'),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const logFile = join(work, 'server.log');
const server = await startServer('ours', { certs, classes: join(work, 'classes.yaml'), logFile });
const samples = [];
let requests = 0;
let errors = 0;
const started = Date.now();
/** The log lines and the end of the saturation phase, read before the work folder goes. */
let decisionLines = 0;
let saturated;
const target = { url: server.url, ca: certs.ca, bodies: join(work, 'bodies.json') };
/** Runs one load and counts its requests and failures. */
async function tally(options) {
  const load = await runLoad({ ...target, ...options });
  requests += load.requests;
  errors += load.errors + load.timeouts + load.non2xx;
  return load;
}
try {
  while (Date.now() - started < minutes * 60_000) {
    await tally({ connections: 8, duration: SAMPLE_S, rate });
    const sample = { minute: Math.round((Date.now() - started) / 6000) / 10, requests, ...(await scrape(server.port)) };
    samples.push(sample);
    console.error(JSON.stringify(sample));
  }
  // Saturation, where the decision lines come fastest: long enough to fill the log destination's 4 MiB bound
  // if its writes fell behind (docs/benchmarks.md: they did, in about 10 s).
  const load = await tally({ connections: 100, duration: 20 });
  saturated = { rps: Math.round(load.rps), ...(await scrape(server.port)) };
  console.error(JSON.stringify({ saturated }));
} finally {
  // Stopping flushes what the destination still holds.
  await server.stop();
  decisionLines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"allowed":')).length;
  rmSync(work, { recursive: true, force: true });
}

const first = samples.slice(0, Math.min(3, samples.length));
const last = samples.slice(-Math.min(3, samples.length));
const avg = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
const summary = {
  minutes,
  rate,
  requests,
  errors,
  rssMb: {
    start: avg(first, 'rssMb'),
    end: avg(last, 'rssMb'),
    max: Math.max(...samples.map((s) => s.rssMb), saturated?.rssMb ?? 0),
  },
  heapUsedMb: {
    start: avg(first, 'heapUsedMb'),
    end: avg(last, 'heapUsedMb'),
    max: Math.max(...samples.map((s) => s.heapUsedMb)),
  },
  eventLoopP99Ms: { max: Math.max(...samples.map((s) => s.eventLoopP99Ms)) },
  handles: { start: avg(first, 'handles'), end: avg(last, 'handles'), max: Math.max(...samples.map((s) => s.handles)) },
  saturated,
  decisionLines,
};
console.log(JSON.stringify(summary, null, 2));
check(errors === 0 && requests > 0, `${requests} requests, ${errors} errors`);
// "Beyond noise": the heap after the run stays within 8 MB of where it started (GC timing moves it by a few MB).
check(
  summary.heapUsedMb.end - summary.heapUsedMb.start < 8,
  `heap ${summary.heapUsedMb.start.toFixed(1)} -> ${summary.heapUsedMb.end.toFixed(1)} MB`,
);
check(summary.handles.end - summary.handles.start <= 4, `open handles ${summary.handles.start} -> ${summary.handles.end}`);
check(
  // At least one line per request counted: the fixed-rate loads' unmeasured first second and the requests still
  // in flight when a load stops are answered and logged but not counted.
  saturated?.logLinesDropped === 0 && decisionLines >= requests,
  `${decisionLines} decision lines for ${requests} requests counted, ${saturated?.logLinesDropped} dropped (saturation at ${saturated?.rps} requests/s included)`,
);
// The Deployment's memory limit (manifests/base/deployment.yaml): the process stays inside it at every sample.
const CONTAINER_LIMIT_MB = (192 * 1024 * 1024) / 1e6;
check(summary.rssMb.max < CONTAINER_LIMIT_MB, `RSS at most ${summary.rssMb.max} MB, under the 192 Mi container limit`);
process.exit(countsLine('soak'));
