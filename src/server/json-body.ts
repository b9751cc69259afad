import { isUtf8 } from 'node:buffer';
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
