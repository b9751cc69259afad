import { TextDecoder } from 'node:util';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  BodyTooLargeError,
  EmptyBodyError,
  NotFoundError,
  NotJsonError,
  NotUtf8Error,
  UnsupportedMediaTypeError,
} from '../admission/errors.js';
import { reviewAdmission, type ReviewDeps, type ReviewOutcome } from '../admission/review.js';
import type { Logger } from '../log/logger.js';
import type { WebhookMetrics } from './metrics.js';
import { redactForLog } from '../log/redact.js';
import { MIN_TLS_VERSION } from './tls.js';

/** An AdmissionReview carries the object and the old object; the apiserver caps each near 3 MiB. */
export const BODY_LIMIT = 7 * 1024 * 1024;

/**
 * Longer than the apiserver's idle connection timeout (Go's http.Transport IdleConnTimeout, 90 s), so the
 * apiserver closes idle connections first and never sends on one we are closing.
 */
export const KEEP_ALIVE_MS = 120_000;

/** Admission paths: ours, and upstream's two so existing webhook configurations keep working. */
export const ADMISSION_PATHS = ['/validate', '/volumesnapshot', '/volumegroupsnapshot'] as const;

export interface Readiness {
  /** Reasons the server is not ready; empty when ready. */
  notReadyReasons(): readonly string[];
}

export interface AppOptions {
  readonly review: ReviewDeps;
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Serving certificate and key; omitted for plain HTTP (in-process tests with inject only). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Called after every answered admission request (events). */
  readonly onDecision?: (outcome: ReviewOutcome, durationMs: number) => void;
  readonly metrics?: WebhookMetrics;
  /** True once shutdown began: answers then carry `Connection: close` so clients stop reusing connections. */
  readonly closing?: () => boolean;
}

/**
 * Below the webhook's timeoutSeconds (5 s): a client that has not sent its whole body by then gets a 408 from
 * us rather than a timeout at the apiserver, and a slow sender cannot hold a connection open for long.
 */
export const REQUEST_TIMEOUT_MS = 4_000;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonBody(_request: FastifyRequest, body: Buffer): unknown {
  if (body.length === 0) throw new EmptyBodyError();
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new NotUtf8Error();
  }
  try {
    // Plain JSON.parse: keys such as __proto__ become ordinary own properties and are never merged into
    // anything, so a class's free-form `parameters` cannot break or poison a request.
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new NotJsonError((error as Error).message);
  }
}

function errorBody(error: FastifyError, statusCode: number): Record<string, unknown> {
  const title =
    statusCode === 415
      ? 'Unsupported Media Type'
      : statusCode === 413
        ? 'Payload Too Large'
        : statusCode === 404
          ? 'Not Found'
          : statusCode >= 500
            ? 'Internal Server Error'
            : 'Bad Request';
  return { statusCode, code: error.code ?? 'SW_ERROR', error: title, message: error.message };
}

/** Maps fastify's own errors to ours, so every error body has the same shape and a message that helps. */
function translate(error: FastifyError, request: FastifyRequest): FastifyError {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError(request.headers['content-type'] ?? '(none)');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new BodyTooLargeError(String(BODY_LIMIT));
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new EmptyBodyError();
    default:
      return error;
  }
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { logger, review, readiness, onDecision, metrics, closing } = options;
  const app = Fastify({
    ...(options.tls === undefined ? {} : { https: { ...options.tls, minVersion: MIN_TLS_VERSION } }),
    bodyLimit: BODY_LIMIT,
    keepAliveTimeout: KEEP_ALIVE_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Our own line per decision replaces fastify's two lines per request.
    logger: false,
    // Requests that arrive while closing are still answered: a 503 would fail an apiserver call.
    return503OnClosing: false,
    exposeHeadRoutes: false,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (req, body, done) => {
    try {
      done(null, parseJsonBody(req, body as Buffer));
    } catch (error) {
      done(error as FastifyError, undefined);
    }
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const mapped = translate(error, request);
    const statusCode = mapped.statusCode !== undefined && mapped.statusCode >= 400 ? mapped.statusCode : 500;
    metrics?.malformedRequest(mapped.code ?? 'SW_ERROR');
    if (statusCode >= 500) logger.error({ err: error, url: request.url }, 'unexpected error answering a request');
    else logger.debug({ code: mapped.code, url: request.url, message: mapped.message }, 'rejected a malformed request');
    return reply.code(statusCode).send(errorBody(mapped, statusCode));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new NotFoundError(request.method, request.url.slice(0, 100));
    return reply.code(404).send(errorBody(error, 404));
  });

  const admit = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const started = performance.now();
    if (request.body === undefined) throw new EmptyBodyError();
    metrics?.inFlight.inc();
    try {
      return answer(reviewAdmission(request.body, review), started, reply);
    } finally {
      metrics?.inFlight.dec();
    }
  };
  const answer = (outcome: ReviewOutcome, started: number, reply: FastifyReply): FastifyReply => {
    const durationMs = performance.now() - started;
    logDecision(logger, outcome, durationMs);
    metrics?.observe(outcome, durationMs);
    onDecision?.(outcome, durationMs);
    // The answer is written straight to the socket in one write, as the bench's bare-Node ceiling does:
    // fastify's reply pipeline (onSend hooks, corked writev) cost more per request than the rules do.
    const text = JSON.stringify(outcome.body);
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      ...(closing?.() === true ? { connection: 'close' } : {}),
    });
    reply.raw.end(text);
    return reply;
  };
  if (metrics !== undefined) {
    app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.text()));
  }
  for (const path of ADMISSION_PATHS) app.post(path, admit);

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

/** One line per decision: who asked what, the answer, the rule that decided and how long it took. */
export function logDecision(logger: Logger, outcome: ReviewOutcome, durationMs: number): void {
  const { request, decision, evaluation } = outcome;
  logger.info(
    {
      uid: request.uid,
      kind: evaluation.route?.kind ?? request.kind.kind,
      resource: `${request.resource.resource}.${request.resource.version}.${request.resource.group}`,
      namespace: request.namespace,
      name: request.name,
      operation: request.operation,
      user: request.userInfo?.username,
      dryRun: request.dryRun === true ? true : undefined,
      allowed: decision.allowed,
      rule: decision.denial?.rule,
      reason: decision.denial?.message,
      warnings: decision.warnings.length > 0 ? decision.warnings.length : undefined,
      ms: Math.round(durationMs * 1000) / 1000,
    },
    decision.allowed ? (decision.softened ? 'allowed (would be denied)' : 'allowed') : 'denied',
  );
  if (logger.isLevelEnabled('debug')) {
    logger.debug({ uid: request.uid, request: redactForLog(request), response: outcome.body.response }, 'request and response');
  }
}
