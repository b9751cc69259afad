import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonBodyParser } from '../json-body.js';

/**
 * The listener's one body parser: `application/json` only (any other type is a coded 415), read by JSON.parse, with
 * the time the body was complete on each request. The conversion route reads its own body losslessly in its scope.
 */
export const jsonBody = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('bodyReceivedAt', 0);
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser());
  },
  { name: 'json-body', fastify: '5.x' },
);
