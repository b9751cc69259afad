import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { collectAnswer, type HttpsAnswer } from './https.js';

export type Answer = HttpsAnswer;

/** Listens on a free loopback port (plain HTTP: the app was built without TLS) and returns the port. */
export async function listenLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

/** One request to a loopback server, bounded in time; the body is sent as given (string or bytes). */
export function send(
  port: number,
  options: { method?: string; url: string; headers?: Record<string, string>; payload?: string | Buffer },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.url, headers: options.headers, timeout: 10_000 },
      (res) => collectAnswer(res, resolve),
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    // The server may answer (413) before it has read a large body; the answer is what the test looks at.
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    req.end(options.payload);
  });
}

/** POSTs JSON to /validate. */
export function postJson(port: number, payload: string, url = '/validate'): Promise<Answer> {
  return send(port, { url, headers: { 'content-type': 'application/json' }, payload });
}
