// The load generator, run as its own process so it does not share the server's event loop:
// node load.mjs '<json options>' -> prints autocannon's result as JSON on stdout.
// Options: url, ca (file), bodies (file: JSON array of request bodies), connections, duration, amount, rate,
// timeout (seconds a request may take, default 10).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]);
const bodies = JSON.parse(readFileSync(options.bodies, 'utf8'));
if (options.rate) {
  // autocannon's fixed-rate mode sends each second's requests in a burst (p99 near 90 ms even for the bare
  // ceiling), so the fixed rate uses an open-loop sender: one request every 1/rate s, latency in µs.
  const { fixedRate } = await import('./fixed-rate.mjs');
  process.stdout.write(JSON.stringify(await fixedRate({ ...options, bodies })));
  process.exit(0);
}
const result = await autocannon({
  url: options.url,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  // Keep-alive connections (autocannon's default), each cycling through the mix.
  requests: bodies.map((body) => ({ body })),
  connections: options.connections ?? 16,
  pipelining: 1,
  ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 5 }),
  ...(options.rate ? { overallRate: options.rate } : {}),
  tlsOptions: { ca: readFileSync(options.ca), servername: 'localhost' },
  timeout: options.timeout ?? 10,
});
process.stdout.write(
  JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.average,
    duration: result.duration,
    latency: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      p999: result.latency.p99_9,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  }),
);
