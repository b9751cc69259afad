import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import { EmptyBodyError, NotJsonError, NotUtf8Error } from '../admission/errors.js';

/**
 * A request body as UTF-8 JSON, parsed by `parse` (JSON.parse, or a lossless reader); each way it can be
 * unreadable is its own coded error. With JSON.parse `__proto__` in `parameters` is an ordinary own key.
 */
export function readJsonBody(body: Buffer, parse: (text: string) => unknown = JSON.parse): unknown {
  if (body.length === 0) throw new EmptyBodyError();
  if (!isUtf8(body)) throw new NotUtf8Error();
  try {
    return parse(body.toString('utf8'));
  } catch (error) {
    throw new NotJsonError((error as Error).message);
  }
}

/**
 * A fastify content-type parser (`parseAs: 'buffer'`) for `application/json` bodies read by `parse`; it notes
 * when the whole body had arrived, where a review's duration starts.
 */
export function jsonBodyParser(parse: (text: string) => unknown = JSON.parse) {
  return (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, parsed?: unknown) => void): void => {
    request.bodyReceivedAt = performance.now();
    try {
      done(null, readJsonBody(body as Buffer, parse));
    } catch (error) {
      done(error as Error, undefined);
    }
  };
}
