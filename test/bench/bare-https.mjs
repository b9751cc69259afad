// The bare server: an HTTPS server on the same Node, with the same TLS settings and keep-alive as ours, that
// reads and parses the same JSON body and answers a fixed AdmissionReview, each answer written as soon as it is made.
// It is the comparator the targets name, and the only one when the upstream peer is missing.
// node bare-https.mjs CERT KEY PORT
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const [cert, key, port] = process.argv.slice(2);
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
