// An open-loop load at a fixed rate: requests leave on schedule (every 1/rate s, checked each millisecond)
// whatever the answers do, over a keep-alive pool; latency is from sending to the whole answer, in ms with µs
// resolution. A spinning scheduler (exact send times) measured worse tails for both servers on 2 shared cores.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { latencySummary } from './latency.mjs';

export async function fixedRate({ url, ca, bodies, rate, duration, timeoutMs = 10_000 }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  // One second at the rate first, not measured: it opens the TLS connections (a burst of handshakes would
  // otherwise dominate the tail) and warms the JIT, as a running apiserver's connection pool would be.
  await openLoop({ url, ca, bodies, rate, duration: 1, agent, timeoutMs });
  const result = await openLoop({ url, ca, bodies, rate, duration, agent, timeoutMs });
  agent.destroy();
  return result;
}

async function openLoop({ url, ca, bodies, rate, duration, agent, timeoutMs }) {
  const target = new URL(url);
  const caPem = readFileSync(ca);
  const latencies = [];
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  let sent = 0;
  const total = Math.round(rate * duration);
  const start = performance.now();
  await new Promise((resolve) => {
    let finished = 0;
    const send = (body) => {
      const sentAt = performance.now();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          ca: caPem,
          servername: 'localhost',
          agent,
          headers: { 'content-type': 'application/json' },
          timeout: timeoutMs,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - sentAt);
            if (res.statusCode !== 200) non2xx += 1;
            if (++finished === total) resolve();
          });
        },
      );
      // Node only reports the socket's timeout; the request is ended here, counted as a timeout, not an error.
      let timedOut = false;
      req.on('timeout', () => {
        timedOut = true;
        req.destroy(new Error('timed out'));
      });
      req.on('error', () => {
        if (timedOut) timeouts += 1;
        else errors += 1;
        if (++finished === total) resolve();
      });
      req.end(body);
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      while (sent < due) {
        send(bodies[sent % bodies.length]);
        sent += 1;
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const seconds = (performance.now() - start) / 1000;
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    duration: seconds,
    latency: latencySummary(latencies),
    errors,
    timeouts,
    non2xx,
  };
}
