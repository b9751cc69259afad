import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import { EmptyBodyError, NotJsonError, NotUtf8Error, TooComplexError } from './http-errors.js';
import { BOUNDS } from '../limits/bounds.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** When the body was complete (performance.now()): a review's duration starts there. */
    bodyReceivedAt: number;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** Counts `{` and `[` outside strings, stopping past the bound. A body under 2 bytes per container cannot exceed it. */
function tooManyContainers(body: Buffer): boolean {
  if (body.length <= 2 * BOUNDS.jsonContainers) return false;
  let inString = false;
  let count = 0;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if ((byte === OPEN_BRACE || byte === OPEN_BRACKET) && ++count > BOUNDS.jsonContainers) {
      return true;
    }
  }
  return false;
}

/**
 * A request body as UTF-8 JSON, parsed by `parse` (JSON.parse, or a lossless reader); each way it can be
 * unreadable is its own coded error. With JSON.parse `__proto__` in `parameters` is an ordinary own key.
 */
export function readJsonBody(body: Buffer, parse: (text: string) => unknown = JSON.parse): unknown {
  if (body.length === 0) throw new EmptyBodyError();
  if (!isUtf8(body)) throw new NotUtf8Error();
  if (tooManyContainers(body)) throw new TooComplexError(String(BOUNDS.jsonContainers));
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
