import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyError } from 'fastify';
import { BodyTooLargeError, EmptyBodyError, NotJsonError, NotUtf8Error, UnsupportedMediaTypeError } from '../admission/errors.js';
import { responseText } from '../admission/respond.js';
import { reviewAdmission, type ReviewDeps, type ReviewOutcome } from '../admission/review.js';
import { logDecision } from '../log/decision-line.js';
import type { Logger } from '../log/logger.js';
import { errorBody } from './error-body.js';
import type { WebhookMetrics } from './metrics.js';

/** An AdmissionReview carries the object and the old object; the apiserver caps each near 3 MiB. */
export const BODY_LIMIT = 7 * 1024 * 1024;

/** Admission paths: ours, and upstream's two so existing webhook configurations keep working. */
export const ADMISSION_PATHS = ['/validate', '/volumesnapshot', '/volumegroupsnapshot'] as const;
const PATHS: ReadonlySet<string> = new Set(ADMISSION_PATHS);

export interface AdmissionHandlerOptions {
  readonly review: ReviewDeps;
  readonly logger: Logger;
  readonly metrics?: WebhookMetrics;
  /** Called after every answered admission request (events). */
  readonly onDecision?: (outcome: ReviewOutcome, durationMs: number) => void;
  /** True once shutdown began: answers then carry `Connection: close` so clients stop reusing connections. */
  readonly closing?: () => boolean;
}

/** A POST to an admission path; the apiserver appends `?timeout=5s`, so the query is ignored. */
export function isAdmissionRequest(req: IncomingMessage): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return PATHS.has(query === -1 ? url : url.slice(0, query));
}

/** `application/json; charset=utf-8` → `application/json`; undefined when there is no header. */
function mediaType(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Reads the body as UTF-8 JSON. Plain JSON.parse: `__proto__` in `parameters` is an ordinary own key. */
function parseBody(body: Buffer): unknown {
  if (body.length === 0) throw new EmptyBodyError();
  if (!isUtf8(body)) throw new NotUtf8Error();
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new NotJsonError((error as Error).message);
  }
}

/**
 * The admission route, on Node's request and response: the body is read, parsed, reviewed and answered in one
 * write, as the bench's bare-Node ceiling does. Fastify's request pipeline (routing, hooks, content-type
 * parsers, request and reply objects) cost 20-25% of a bare Node server's throughput (measured with a minimal
 * fastify app), more than the rules themselves, so this one route bypasses it; fastify serves everything else
 * (probes, metrics, 404s) and owns the server's life (listen, close, connection handling).
 */
export function createAdmissionHandler(options: AdmissionHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { review, logger, metrics, onDecision, closing } = options;

  const write = (res: ServerResponse, statusCode: number, text: string): void => {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    };
    if (closing?.() === true) headers.connection = 'close';
    res.writeHead(statusCode, headers);
    res.end(text);
  };

  const refuse = (res: ServerResponse, error: FastifyError, url: string | undefined): void => {
    const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    metrics?.malformedRequest(error.code ?? 'SW_ERROR');
    if (statusCode >= 500) logger.error({ err: error, url }, 'unexpected error answering a request');
    else logger.debug({ code: error.code, url, message: error.message }, 'rejected a malformed request');
    if (!res.headersSent) write(res, statusCode, JSON.stringify(errorBody(error, statusCode)));
  };

  const admit = (res: ServerResponse, body: Buffer, url: string | undefined): void => {
    const started = performance.now();
    try {
      const outcome = reviewAdmission(parseBody(body), review);
      const durationMs = performance.now() - started;
      logDecision(logger, outcome, durationMs);
      metrics?.observe(outcome, durationMs);
      onDecision?.(outcome, durationMs);
      write(res, 200, responseText(outcome.body));
    } catch (error) {
      refuse(res, error as FastifyError, url);
    }
  };

  // In flight from the headers to the answer (or the client going away): 'close' comes once in either case.
  const settled = (): void => {
    if (metrics !== undefined) metrics.inFlight -= 1;
  };

  return (req, res) => {
    if (metrics !== undefined) {
      metrics.inFlight += 1;
      res.once('close', settled);
    }
    const media = mediaType(req.headers['content-type']);
    if (media !== 'application/json') {
      const error =
        media === undefined && !hasBody(req)
          ? new EmptyBodyError()
          : new UnsupportedMediaTypeError(req.headers['content-type'] ?? '(none)');
      return refuse(res, error, req.url);
    }
    if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT) {
      return refuse(res, new BodyTooLargeError(String(BODY_LIMIT)), req.url);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size <= BODY_LIMIT) return void chunks.push(chunk);
      // A body without a length that outgrows the limit: answered now; Node discards the rest of it.
      refused = true;
      chunks.length = 0;
      refuse(res, new BodyTooLargeError(String(BODY_LIMIT)), req.url);
    });
    req.on('end', () => {
      if (!refused) admit(res, Buffer.concat(chunks, size), req.url);
    });
    // A client that goes away mid-body leaves nothing to answer.
    req.on('error', () => undefined);
  };
}
