import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BOUNDS } from '../../limits/bounds.js';
import type { Logger } from '../../log/logger.js';
import { asWebhookError, errorBody, notFound } from '../error-body.js';
import type { WebhookMetrics } from '../metrics.js';

export interface CodedErrorsOptions {
  readonly logger: Logger;
  readonly metrics: WebhookMetrics | undefined;
  /** What the listener answers, for the 404 of any other path: `admission paths are POST /validate, ...`. */
  readonly paths: string;
}

/**
 * Every error a listener answers, and every unknown path, through one handler: the coded JSON body of
 * error-body.ts, counted by its code; a 500 is logged as an error, a refused request at debug.
 */
export const codedErrors = fp(
  async (app: FastifyInstance, { logger, metrics, paths }: CodedErrorsOptions) => {
    app.setErrorHandler((raw: FastifyError, request, reply) => {
      const error = asWebhookError(raw, request, paths);
      const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
      metrics?.malformedRequest(statusCode >= 500 ? 'SW_ERROR' : (error.code ?? 'SW_ERROR'));
      if (statusCode >= 500)
        logger.error({ err: error, url: request.url.slice(0, BOUNDS.echoChars) }, 'unexpected error answering a request');
      else
        logger.debug(
          { code: error.code, url: request.url.slice(0, BOUNDS.echoChars), message: error.message },
          'rejected a malformed request',
        );
      return reply.code(statusCode).send(errorBody(error, statusCode));
    });
    app.setNotFoundHandler(async (request) => {
      throw notFound(request, paths);
    });
  },
  { name: 'coded-errors', fastify: '5.x' },
);
