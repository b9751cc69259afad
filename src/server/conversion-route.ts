import type { FastifyInstance } from 'fastify';
import { EmptyBodyError } from '../admission/errors.js';
import { reviewConversion } from '../conversion/conversion-review.js';
import { parseLossless } from '../conversion/lossless-json.js';
import type { Logger } from '../log/logger.js';
import { jsonBodyParser } from './json-body.js';
import type { WebhookMetrics } from './metrics.js';
import { BOUNDS } from '../limits/bounds.js';

export interface ConversionRouteOptions {
  readonly logger: Logger;
  readonly metrics?: WebhookMetrics;
}

/**
 * POST /convert: CRD conversion for the group snapshot API, in its own fastify scope so that its body is read
 * losslessly (int64 values beyond 2^53 kept digit for digit) while admission keeps plain JSON.parse. The same
 * content type, body limit, TLS and error answers as admission; it never runs the admission rules.
 */
export async function conversionRoutes(scope: FastifyInstance, options: ConversionRouteOptions): Promise<void> {
  const { logger, metrics } = options;
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser(parseLossless));
  scope.post('/convert', async (request) => {
    if (request.body === undefined) throw new EmptyBodyError();
    const outcome = reviewConversion(request.body, parseLossless);
    const durationMs = performance.now() - request.bodyReceivedAt;
    metrics?.observeConversion(outcome, durationMs);
    const line = {
      uid: outcome.request.uid.slice(0, BOUNDS.echoChars),
      to: outcome.request.desiredAPIVersion.slice(0, BOUNDS.echoChars),
      objects: outcome.request.objects.length,
    };
    if (outcome.failure !== undefined) logger.warn({ ...line, reason: outcome.failure }, 'conversion failed');
    else logger.debug(line, 'converted');
    return outcome.body;
  });
}
