import type { FastifyError, FastifyRequest } from 'fastify';
import { BodyTooLargeError, NotFoundError, UnsupportedMediaTypeError } from './http-errors.js';
import { BOUNDS } from '../limits/bounds.js';

const TITLES: Readonly<Record<number, string>> = {
  404: 'Not Found',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
};

/** The one shape of every error answer: `{ statusCode, code, error, message }`, as JSON. */
export function errorBody(error: FastifyError, statusCode: number): Record<string, unknown> {
  const title = TITLES[statusCode] ?? (statusCode >= 500 ? 'Internal Server Error' : 'Bad Request');
  return { statusCode, code: error.code ?? 'SW_ERROR', error: title, message: error.message };
}

/**
 * Fastify's own refusals, said in this webhook's words (http-errors.ts): the answer names what to send instead.
 * A request to an unknown path is a 404 whatever its body, never a 415 from reading that body; `paths` says what
 * the listener answers.
 */
export function asWebhookError(error: FastifyError, request: FastifyRequest, paths: string): FastifyError {
  if (request.is404) return notFound(request, paths);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError((request.headers['content-type'] ?? '(none)').slice(0, BOUNDS.echoChars));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new BodyTooLargeError(String(BOUNDS.bodyBytes));
    default:
      return error;
  }
}

/** The coded 404 of a request to a path the listener does not answer. */
export function notFound(request: FastifyRequest, paths: string): FastifyError {
  return new NotFoundError(request.method, request.url.slice(0, BOUNDS.echoChars), paths);
}
