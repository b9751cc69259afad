import { request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiserverError } from './apiserver-error.js';
import { BOUNDS } from '../limits/bounds.js';

/**
 * A plain JSON request to the apiserver, authenticated by client-node's KubeConfig (TLS, tokens, exec
 * plugins). Used instead of client-node's generated API classes: those pull in every Kubernetes model, memory for
 * the calls we make (docs/benchmarks.md, "Where the memory goes").
 */
export async function kubeRequest<T>(kc: KubeConfig, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  return (await kubeExchange<T>(kc, method, path, body)).body;
}

/**
 * The connections kubeExchange keeps open to the apiserver, per kubeconfig. client-node's applyToHTTPSOptions
 * hands each request an https.Agent without keep-alive, so every call paid a new TCP connection, TLS handshake
 * and TLS context: at idle the permission reviews and watch probes (every 10 s) opened a dozen a round, and
 * RSS rose while their native memory waited for a GC (docs/benchmarks.md, "Where the memory goes"). An idle
 * connection is kept for 30 s, longer than those rounds and shorter than the apiserver's own idle timeout (90 s),
 * so the apiserver does not close one under a request. A kubeconfig with a proxy keeps client-node's agent.
 */
export const KUBE_CONNECTIONS = 4;
export const KUBE_IDLE_MS = 30_000;
const pools = new WeakMap<KubeConfig, HttpsAgent>();

function pool(kc: KubeConfig): HttpsAgent {
  let agent = pools.get(kc);
  if (agent === undefined) {
    agent = new HttpsAgent({
      keepAlive: true,
      maxSockets: KUBE_CONNECTIONS,
      maxFreeSockets: KUBE_CONNECTIONS,
      timeout: KUBE_IDLE_MS,
    });
    pools.set(kc, agent);
  }
  return agent;
}

export interface KubeAnswer<T> {
  readonly body: T;
  /** The apiserver's clock at the answer (its Date header, whole seconds), in ms since the epoch. */
  readonly date: number;
}

/** kubeRequest, with the apiserver's Date and a timeout of the caller's choosing. */
export async function kubeExchange<T>(
  kc: KubeConfig,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<KubeAnswer<T>> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(path, cluster.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const options: RequestOptions = {
    method,
    host: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    // A PATCH body is a JSON merge patch (RFC 7386), the one patch kind this server sends.
    headers: {
      accept: 'application/json',
      ...(payload === undefined
        ? {}
        : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    },
  };
  await kc.applyToHTTPSOptions(options);
  if (url.protocol === 'https:' && cluster.proxyUrl === undefined) options.agent = pool(kc);
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise<KubeAnswer<T>>((resolve, reject) => {
    const req = send(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(deadline);
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        const parsedDate = Date.parse(res.headers.date ?? '');
        const date = Number.isNaN(parsedDate) ? Date.now() : parsedDate;
        if (status >= 200 && status < 300) {
          try {
            resolve({ body: JSON.parse(text) as T, date });
          } catch (error) {
            reject(new Error(`${method} ${path}: the answer is not JSON`, { cause: error }));
          }
          return;
        }
        let answer: { message?: string; reason?: string } = {};
        try {
          answer = JSON.parse(text) as { message?: string; reason?: string };
        } catch {
          // Not a Status object: keep the text.
        }
        const message = typeof answer.message === 'string' ? answer.message : text.slice(0, BOUNDS.apiserverMessageChars);
        const reason = typeof answer.reason === 'string' ? answer.reason : undefined;
        reject(new ApiserverError(`${method} ${path}: HTTP ${status}: ${message}`, status, reason, date));
      });
    });
    // The deadline bounds the whole call from now, a wait for one of the pool's connections included (a frozen
    // apiserver can hold them all), and so any silence on the connection too. A request still waiting reports its
    // destruction only once it gets a connection, so the call is rejected here at once.
    const deadline = setTimeout(() => {
      const error = new ApiserverError(`${method} ${path}: timed out`, undefined);
      req.destroy(error);
      reject(error);
    }, timeoutMs);
    req.on('error', (error) => {
      clearTimeout(deadline);
      reject(ApiserverError.from(error));
    });
    req.end(payload);
  });
}
