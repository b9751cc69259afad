// The libraries floor (bench:budget): the three libraries ours answers through, used as ours uses them, and none of
// ours' own code but its log destination and its turn's end (answers, then records). fastify over HTTPS with the same
// TLS settings and keep-alive as ours, no route schemas, fastify's JSON body parser; one pino info line per request to
// stdout through ours' destination (src/log/logger.ts: pino's asynchronous destination, sonic-boom in its buffer mode,
// ours' write sizes and bound); one observation of a prom-client histogram per request, the line and the observation
// made as ours makes them, at the end of the event loop's turn (src/server/decision-records.ts); a fixed
// AdmissionReview as the answer, written as ours writes its answers, with the turn's others at its end
// (src/server/turn-answers.ts), on every rung. Bundled like ours before it runs (budget.mjs), so it starts as a bundle
// does. What any webhook built on them pays before its rules.
// LAYERS, the rungs of that floor: `fastify` (the answer alone, nothing recorded), `fastify+pino` (the line too)
// or `fastify+pino+prom-client` (the default: the floor). A library a rung leaves out is not loaded, so each
// rung's start to ready is its own.
// node libraries-https.mjs CERT KEY PORT [LAYERS]
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { TurnAnswers } from '../../dist/server/turn-answers.js';

const FLOOR_LAYERS = ['fastify', 'fastify+pino', 'fastify+pino+prom-client'];
const [cert, key, port, layers = FLOOR_LAYERS.at(-1)] = process.argv.slice(2);
if (!FLOOR_LAYERS.includes(layers)) throw new Error(`LAYERS is one of ${FLOOR_LAYERS.join(', ')}`);

/** The rung's record of an answered review, made at the end of the turn as ours makes it; none for `fastify`. */
async function recorder() {
  if (layers === 'fastify') return undefined;
  const [{ createLogger }, { DecisionRecords }] = await Promise.all([
    import('../../dist/log/logger.js'),
    import('../../dist/server/decision-records.js'),
  ]);
  const log = createLogger('info');
  const seconds = layers === 'fastify+pino' ? undefined : await histogram();
  return new DecisionRecords(({ request }, durationMs) => {
    log.info({ uid: request.uid, allowed: true }, 'decision');
    seconds?.observe({ allowed: 'true' }, durationMs / 1000);
  }, log);
}

/** prom-client's histogram of review durations, as ours observes one per request. */
async function histogram() {
  // A CommonJS module: its exports are the default export, bundled or not.
  const { Histogram, Registry } = (await import('prom-client')).default;
  return new Histogram({
    name: 'floor_review_duration_seconds',
    help: 'Time to answer a review.',
    labelNames: ['allowed'],
    registers: [new Registry()],
  });
}
const records = await recorder();
const answers = new TurnAnswers();
const noSchemas = () => () => {
  throw new Error('no route schemas');
};
const app = Fastify({
  logger: false,
  keepAliveTimeout: 120_000,
  https: { cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.2' },
  schemaController: { compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas } },
});
app.get('/readyz', async () => 'ok');
app.post('/validate', async (request) => {
  const started = performance.now();
  const uid = request.body?.request?.uid ?? '';
  const turnEnd = answers.end();
  records?.add({ request: { uid } }, performance.now() - started);
  await turnEnd;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } };
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
