import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { reviewConversion } from '../../conversion/conversion-review.js';
import { parseLossless } from '../../conversion/lossless-json.js';
import { BOUNDS } from '../../limits/bounds.js';
import type { Logger } from '../../log/logger.js';
import { EmptyBodyError } from '../http-errors.js';
import { jsonBodyParser } from '../json-body.js';
import type { WebhookMetrics } from '../metrics.js';

export interface ConversionRouteOptions {
  readonly logger: Logger;
  readonly metrics?: WebhookMetrics;
}

/**
 * POST /convert: CRD conversion for the group snapshot API. Its route is in a scope of its own, in which its body is
 * read losslessly (int64 values beyond 2^53 kept digit for digit) while admission keeps plain JSON.parse. The same
 * content type, body limit, TLS and error answers as admission; it never runs the admission rules.
 */
export const conversionRoutes = fp(
  async (app: FastifyInstance, options: ConversionRouteOptions) => {
    await app.register(async (scope) => losslessConversion(scope, options));
  },
  { name: 'conversion-routes', fastify: '5.x', dependencies: ['json-body'] },
);

async function losslessConversion(scope: FastifyInstance, options: ConversionRouteOptions): Promise<void> {
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
