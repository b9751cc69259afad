import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { NotFoundError } from '../admission/errors.js';
import type { ReviewDeps, ReviewOutcome } from '../admission/review.js';
import type { Logger } from '../log/logger.js';
import { BODY_LIMIT, createAdmissionHandler, isAdmissionRequest } from './admission-handler.js';
import { errorBody } from './error-body.js';
import type { WebhookMetrics } from './metrics.js';
import { MIN_TLS_VERSION } from './tls.js';

/**
 * Longer than the apiserver's idle connection timeout (Go's http.Transport IdleConnTimeout, 90 s), so the
 * apiserver closes idle connections first and never sends on one we are closing.
 */
export const KEEP_ALIVE_MS = 120_000;

/**
 * Below the webhook's timeoutSeconds (5 s): a client that has not sent its whole request by then gets a 408
 * from Node rather than a timeout at the apiserver, and a slow sender cannot hold a connection open for long.
 */
export const REQUEST_TIMEOUT_MS = 4_000;

export interface Readiness {
  /** Reasons the server is not ready; empty when ready. */
  notReadyReasons(): readonly string[];
}

export interface AppOptions {
  readonly review: ReviewDeps;
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Serving certificate and key; omitted for plain HTTP on loopback (tests only). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Called after every answered admission request (events). */
  readonly onDecision?: (outcome: ReviewOutcome, durationMs: number) => void;
  readonly metrics?: WebhookMetrics;
  /** True once shutdown began: answers then carry `Connection: close` so clients stop reusing connections. */
  readonly closing?: () => boolean;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The server fastify listens with: admission POSTs go to the admission handler, everything else to fastify.
 * Timeouts are set here because fastify applies its own only to servers it creates.
 */
function serverWith(options: AppOptions, admission: Handler) {
  return (fastifyHandler: Handler) => {
    const dispatch: Handler = (req, res) => (isAdmissionRequest(req) ? admission(req, res) : fastifyHandler(req, res));
    const server =
      options.tls === undefined
        ? createHttpServer(dispatch)
        : createHttpsServer({ ...options.tls, minVersion: MIN_TLS_VERSION }, dispatch);
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    return server;
  };
}

/**
 * Fastify's routes here declare no schemas, so its schema compilers (Ajv and fast-json-stringify) are never
 * needed; supplying these keeps fastify from loading them at start (about 20 ms) and lets the bundle leave
 * them out. The admission rules' validators are compiled ahead of time from schemas/.
 */
const NO_ROUTE_SCHEMAS = {
  compilersFactory: {
    buildValidator: () => () => {
      throw new Error('snapshot-webhook declares no fastify route schemas');
    },
    buildSerializer: () => () => {
      throw new Error('snapshot-webhook declares no fastify route schemas');
    },
  },
};

export function buildApp(options: AppOptions): FastifyInstance {
  const { logger, readiness, metrics } = options;
  const admission = createAdmissionHandler(options);
  const app = Fastify({
    serverFactory: serverWith(options, admission),
    // Our own line per decision replaces fastify's two lines per request.
    logger: false,
    // Requests that arrive while closing are still answered: a 503 would fail an apiserver call.
    return503OnClosing: false,
    exposeHeadRoutes: false,
    schemaController: NO_ROUTE_SCHEMAS,
  });
  // Fastify's routes take no body: one sent anyway (up to the limit) is read and ignored, so every stray
  // request gets the same 404 whatever its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, _body, done) => done(null));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (statusCode >= 500) logger.error({ err: error, url: request.url }, 'unexpected error answering a request');
    return reply.code(statusCode).send(errorBody(error, statusCode));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new NotFoundError(request.method, request.url.slice(0, 100));
    return reply.code(404).send(errorBody(error, 404));
  });
  if (metrics !== undefined) {
    app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.text()));
  }
  app.get('/healthz', async (_request, reply) => reply.type('text/plain').send('ok'));
  app.get('/readyz', async (_request, reply) => {
    const reasons = readiness.notReadyReasons();
    if (reasons.length === 0) return reply.type('text/plain').send('ok');
    return reply
      .code(503)
      .type('text/plain')
      .send(`not ready: ${reasons.join('; ')}`);
  });
  return app;
}
