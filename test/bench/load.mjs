// The load generator, run as its own process so it does not share the server's event loop:
// node load.mjs '<json options>' -> prints the load's result as JSON on stdout: requests, requests/s, latency
// (ms, µs resolution) and failures.
// Options: url, ca (file), bodies (file: JSON array of request bodies), connections, duration, amount, rate,
// timeout (seconds a request may take, default 10), warmup (seconds).
// With `warmup`, the same connections are loaded for warmup + duration seconds and the figures count only the
// answers that arrive in the last `duration` seconds: the steady state of keep-alive connections, the way the
// apiserver holds them. When that window opens, the parent (if it started this with an IPC channel) gets the
// message 'window', so that it reads the server's CPU over exactly the same time. `latencyWithOpening` sums up
// every answer of the run, the load generator's first seconds too: it opens its connections then, one TLS
// handshake each, and its own code is not yet compiled.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { latencySummary } from './latency.mjs';

const options = JSON.parse(process.argv[2]);
const bodies = JSON.parse(readFileSync(options.bodies, 'utf8'));
if (options.rate) {
  // autocannon's fixed-rate mode sends each second's requests in a burst (p99 near 90 ms even for the bare
  // ceiling), so the fixed rate uses an open-loop sender: one request every 1/rate s, latency in µs.
  const { fixedRate } = await import('./fixed-rate.mjs');
  process.stdout.write(JSON.stringify(await fixedRate({ ...options, bodies })));
  process.exit(0);
}
// autocannon's own latency histogram holds whole milliseconds: at a p99 of 13 ms one step is 8%, about the margin
// the p99 target is judged by. Each answer's time comes with its 'response' event in ms with µs resolution, so the
// latencies here are summed from those (at most some hundred thousand numbers for the bench's longest load).
const warmupMs = (options.warmup ?? 0) * 1000;
// Every 2xx answer's latency, in arrival order; the window's are those from `firstInWindow` on.
const latencies = [];
let firstInWindow;
let windowOpenedAt;
const instance = autocannon({
  url: options.url,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  // Keep-alive connections (autocannon's default), each cycling through the mix.
  requests: bodies.map((body) => ({ body })),
  connections: options.connections ?? 16,
  pipelining: 1,
  ...(options.amount ? { amount: options.amount } : { duration: (options.duration ?? 5) + warmupMs / 1000 }),
  tlsOptions: { ca: readFileSync(options.ca), servername: 'localhost' },
  timeout: options.timeout ?? 10,
});
// As autocannon's histogram, the answers with a 2xx status (the others are counted in non2xx).
instance.on('response', (_client, statusCode, _bytes, responseTime) => {
  if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
});
// The channel alone must not keep this process alive once the load is done.
process.channel?.unref();
const openWindow = () => {
  windowOpenedAt = performance.now();
  firstInWindow = latencies.length;
  process.send?.('window');
};
if (warmupMs > 0) setTimeout(openWindow, warmupMs);
else openWindow();
const result = await instance;
const windowSeconds = (performance.now() - windowOpenedAt) / 1000;
const inWindow = latencies.slice(firstInWindow);
process.stdout.write(
  JSON.stringify({
    // Without warmup autocannon's own counts; with it, the answers in the window (autocannon counts them all).
    requests: warmupMs > 0 ? inWindow.length : result.requests.total,
    rps: warmupMs > 0 ? inWindow.length / windowSeconds : result.requests.average,
    duration: warmupMs > 0 ? windowSeconds : result.duration,
    latency: latencySummary(inWindow),
    ...(warmupMs > 0 ? { requestsWithOpening: latencies.length, latencyWithOpening: latencySummary(latencies) } : {}),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  }),
);
