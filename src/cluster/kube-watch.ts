import { STATUS_CODES, request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { BOUNDS } from '../limits/bounds.js';
import { KUBE_IDLE_MS } from './kube-http.js';

type WatchArguments = Parameters<Watch['watch']>;

/**
 * The watches' connections, per kubeconfig: keep-alive, so a watch that starts after another ended cleanly (every
 * 60 s for each kind) reuses its TLS connection. Apart from kube-http's pool, so that the watches, each holding a
 * connection for up to a minute, never take the connections of the calls. A watch that fails closes only its own
 * connection: the other kinds' watches go on. A rotated CA or client certificate gives other TLS options, for
 * which the agent opens other connections.
 */
const watchAgents = new WeakMap<KubeConfig, HttpsAgent>();

function watchAgent(kc: KubeConfig): HttpsAgent {
  let agent = watchAgents.get(kc);
  if (agent === undefined) {
    agent = new HttpsAgent({ keepAlive: true, timeout: KUBE_IDLE_MS });
    watchAgents.set(kc, agent);
  }
  return agent;
}

/**
 * A request that failed on a kept connection before any answer: the apiserver closed that connection as the
 * request went out (Node's documented case for a retry, `request.reusedSocket`). Sent again, it takes another
 * kept connection or a new one; each such failure closes one kept connection, so the tries are bounded by them.
 */
const closedUnderUs = (request: ClientRequest, answered: boolean, error: NodeJS.ErrnoException): boolean =>
  request.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');

/** An error with the HTTP status, as client-node's Watch throws for an answer other than 200 (ListWatch reads it). */
function statusError(status: number, message: string | undefined): Error & { statusCode: number } {
  return Object.assign(new Error(message || STATUS_CODES[status] || 'Internal Server Error'), { statusCode: status });
}

/**
 * client-node's Watch over node:https instead of undici's fetch. undici parses HTTP with a WebAssembly build of
 * llhttp, compiled at its first connection; the watches were the only calls that went through undici, and undici
 * cost cluster mode idle RSS (docs/benchmarks.md, "Where the memory goes"). The same contract
 * as client-node's Watch, which its ListWatch drives: a line of JSON per event; `done` once, with the error (a
 * `TimeoutError` after `silenceMs` without a connection or a byte, an `AbortError` when stopped, an
 * error with `statusCode` for an answer other than 200); the AbortController returned stops the watch.
 */
export class HttpsWatch extends Watch {
  constructor(
    config: KubeConfig,
    /** How long the watch may go without a connection, then without a byte, before it ends with a TimeoutError. */
    private readonly silenceMs: number,
  ) {
    super(config);
  }

  override async watch(...[path, queryParams, callback, done]: WatchArguments): Promise<AbortController> {
    const kc = this.config;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('No currently active cluster');
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(queryParams ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const options: RequestOptions = {
      method: 'GET',
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      headers: { accept: 'application/json' },
    };
    await kc.applyToHTTPSOptions(options);
    // A kubeconfig with a proxy keeps client-node's agent, as kube-http's calls do.
    if (url.protocol === 'https:' && cluster.proxyUrl === undefined) options.agent = watchAgent(kc);

    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const end = (error: Error | null): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      controller.abort();
      done(error);
    };
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const start = (): ClientRequest => {
      let answered = false;
      const request = send(options, (response) => {
        answered = true;
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          response.resume();
          end(statusError(status, response.statusMessage));
          return;
        }
        restartTimer();
        let pending = '';
        const emit = (line: string): void => {
          try {
            const event = JSON.parse(line) as { type: string; object: object };
            callback(event.type, event.object, event);
          } catch {
            // A line that is not JSON, or that its handler threw on, is skipped, as client-node's Watch skips it.
          }
        };
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          restartTimer();
          pending += chunk;
          for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
            emit(pending.slice(0, newline));
            pending = pending.slice(newline + 1);
          }
          if (pending.length > BOUNDS.watchLineChars)
            request.destroy(new Error(`a watch event longer than ${BOUNDS.watchLineChars} characters`));
        });
        response.on('end', () => {
          if (pending !== '') emit(pending);
          end(null);
        });
        response.on('error', end);
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (!ended && closedUnderUs(request, answered, error)) current = start();
        else end(error);
      });
      request.end();
      return request;
    };
    const restartTimer = (): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => current.destroy(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
        this.silenceMs,
      );
      timer.unref();
    };
    let current = start();
    controller.signal.addEventListener('abort', () =>
      current.destroy(new DOMException('This operation was aborted', 'AbortError')),
    );
    restartTimer();
    return controller;
  }
}
