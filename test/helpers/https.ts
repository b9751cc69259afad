import type { IncomingMessage } from 'node:http';
import { request, type Agent } from 'node:https';

export interface HttpsAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTPS request to a loopback server, verified against the given CA, bounded in time. */
export function httpsRequest(
  port: number,
  options: {
    method?: string;
    path: string;
    body?: string;
    headers?: Record<string, string>;
    ca: string | Buffer;
    agent?: Agent;
    servername?: string;
  },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path,
        ca: options.ca,
        servername: options.servername ?? 'localhost',
        headers: options.headers ?? { 'content-type': 'application/json' },
        timeout: 5000,
        ...(options.agent === undefined ? {} : { agent: options.agent }),
      },
      (res) => collectAnswer(res, resolve),
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Reads a whole response into an answer. */
export function collectAnswer(res: IncomingMessage, resolve: (answer: HttpsAnswer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }));
}
