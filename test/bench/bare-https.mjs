// The bare server: an HTTPS server on the same Node, with the same TLS settings and keep-alive as ours, that
// reads and parses the same JSON body and answers a fixed AdmissionReview, each answer written as soon as it is made.
// It is the comparator the targets name, not a floor for every server: one that writes a turn's answers together,
// as ours does, can use less CPU per request (docs/benchmarks.md, "Throughput against the bare server").
// node bare-https.mjs CERT KEY PORT [WORK_US]
// WORK_US (bench:budget): after parsing, run that many µs of CPU work: a fixed count of steps of a loop that
// allocates nothing, counted at start from how many steps 200 ms of the thread's CPU time holds (the kernel
// counts a thread's time in ticks, too coarse to time each request by).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const [cert, key, port, work = '0'] = process.argv.slice(2);
let sink = 1;
function steps(n) {
  let x = sink;
  for (let i = 0; i < n; i++) x = (x * 1103515245 + 12345) % 2147483648;
  sink = x;
}
const cpuUs = () => {
  const t = process.threadCpuUsage();
  return t.user + t.system;
};
/** Loop steps per µs of CPU: as many as fit 200 ms of this thread's CPU time. */
function stepsPerUs() {
  const begin = cpuUs();
  let n = 0;
  while (cpuUs() - begin < 200_000) {
    steps(100_000);
    n += 100_000;
  }
  return n / (cpuUs() - begin);
}
const workSteps = Number(work) > 0 ? Math.round(Number(work) * stepsPerUs()) : 0;
const answer = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: 'fixed', allowed: true },
});
const server = createServer(
  { cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.2', keepAliveTimeout: 120_000 },
  (req, res) => {
    if (req.method === 'GET') return res.end('ok'); // readiness, as ours answers /readyz
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (workSteps > 0) steps(workSteps);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  },
);
server.listen(Number(port), '127.0.0.1', () => console.log(`ready ${port}`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
