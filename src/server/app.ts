import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import Fastify, { type FastifyError, type FastifyHttpsOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { NotFoundError } from '../admission/errors.js';
import { admissionRoutes, type AdmissionRouteOptions } from './admission-route.js';
import { watchHandshakeFailures } from './handshake-failures.js';
import { limitConnections } from './connection-limit.js';
import { conversionRoutes } from './conversion-route.js';
import { asWebhookError, errorBody } from './error-body.js';
import { MIN_TLS_VERSION } from '../certs/serving-pair.js';
import type { ClassSource } from '../classes/class-source.js';
import type { DenialEvents } from '../cluster/denial-events.js';
import { BOUNDS } from '../limits/bounds.js';
import type { DefaultAgreement } from '../rules/default-claim.js';
import { certificateReload } from './plugins/certificate-reload.js';
import { classSource } from './plugins/class-source.js';
import { defaultAgreement } from './plugins/default-agreement.js';
import { denialEvents } from './plugins/denial-events.js';
import { probePort, type ProbePortOptions } from './plugins/probe-port.js';
import type { ServingCertificate } from './serving-certificate.js';

/**
 * Longer than the apiserver's idle connection timeout (Go's http.Transport IdleConnTimeout, 90 s), so the
 * apiserver closes idle connections first and never sends on one we are closing.
 */
export const KEEP_ALIVE_MS = 120_000;

/**
 * Below the webhook's timeoutSeconds (5 s): a client that has not sent its whole request by then gets a 408
 * from Node rather than a timeout at the apiserver, and a slow sender cannot hold a connection open for long.
 */
export const REQUEST_TIMEOUT_MS = 4_000;

/**
 * Node's HTTP server applies the header and request timeouts only when given to its constructor, and checks
 * them every connectionsCheckingInterval (30 s by default): both are passed there. A TLS handshake gets as long.
 */
const CONNECTION_LIMITS = {
  headersTimeout: REQUEST_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  keepAliveTimeout: KEEP_ALIVE_MS,
  connectionsCheckingInterval: 1_000,
};

/** One named part of readiness, and what is wrong with it now (nothing when it is ready). */
export interface ReadinessCheck {
  readonly name: string;
  readonly problems: readonly string[];
  /** Shown by `/readyz?verbose` but not counted: the server stays ready with these problems. */
  readonly informational?: boolean;
}

/** The problems that make the server not ready. */
function readinessProblems(checks: readonly ReadinessCheck[]): string[] {
  return checks.filter((c) => c.informational !== true).flatMap((c) => c.problems);
}

export interface Readiness {
  /** Each check, in a fixed order; the server is ready when none has a problem. */
  checks(): readonly ReadinessCheck[];
}

/** `/readyz?verbose`, as the kube-apiserver's own probes write it: a line per check, then the verdict. */
function verboseReadiness(checks: readonly ReadinessCheck[]): string {
  const lines = checks.map((c) => {
    if (c.problems.length === 0) return `[+]${c.name} ok`;
    return `[-]${c.name} failed${c.informational === true ? ' (not counted: still ready)' : ''}: ${c.problems.join('; ')}`;
  });
  const ready = readinessProblems(checks).length === 0;
  return `${lines.join('\n')}\n${ready ? 'readyz check passed' : 'readyz check failed'}\n`;
}

export interface AppOptions extends AdmissionRouteOptions {
  readonly readiness: Readiness;
  /**
   * Serving certificate and key; omitted for plain HTTP on loopback (tests only). With `clientCa`, mutual TLS:
   * a client without a certificate from it is refused at the handshake, and with `allowedClientNames` one whose
   * certificate names none of them is cut right after it.
   */
  readonly tls?: {
    readonly cert: Buffer;
    readonly key: Buffer;
    readonly clientCa?: Buffer;
    readonly allowedClientNames?: readonly string[];
  };
  /** True once shutdown began: answers then carry `Connection: close` so clients stop reusing connections. */
  readonly closing?: () => boolean;
  /** The long-lived parts a served process has (serve.ts); in process (tests) there are none. */
  readonly parts?: ServerParts;
}

/** What a served process starts with the server and stops when it closes, each a plugin with its onClose. */
export interface ServerParts {
  readonly certificate?: ServingCertificate;
  readonly classes?: ClassSource;
  readonly agreement?: DefaultAgreement;
  readonly events?: DenialEvents;
  /** The plain-HTTP probe server (buildProbeApp), and where it listens. */
  readonly probes?: ProbePortOptions['probes'];
}

/**
 * Fastify's routes here declare no schemas, so its schema compilers (Ajv and fast-json-stringify) are never
 * needed; supplying these keeps fastify from loading them at start and lets the bundle leave them out. The
 * admission rules' validators are compiled ahead of time from schemas/.
 */
const NO_ROUTE_SCHEMAS = {
  compilersFactory: {
    buildValidator: () => () => {
      throw new Error('snapshot-webhook declares no fastify route schemas');
    },
    buildSerializer: () => () => {
      throw new Error('snapshot-webhook declares no fastify route schemas');
    },
  },
};

function createFastify(tls: AppOptions['tls']): FastifyInstance {
  const options = {
    // Our own line per decision replaces fastify's two lines per request.
    logger: false,
    bodyLimit: BOUNDS.bodyBytes,
    keepAliveTimeout: KEEP_ALIVE_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Requests that arrive while closing are still answered: a 503 would fail an apiserver call.
    return503OnClosing: false,
    exposeHeadRoutes: false,
    schemaController: NO_ROUTE_SCHEMAS,
  } satisfies FastifyServerOptions;
  if (tls === undefined) return Fastify({ ...options, http: CONNECTION_LIMITS });
  // fastify types an HTTPS instance apart; the routes here do not depend on which server it is.
  const https: FastifyHttpsOptions<HttpsServer> = {
    ...options,
    https: {
      cert: tls.cert,
      key: tls.key,
      minVersion: MIN_TLS_VERSION,
      handshakeTimeout: REQUEST_TIMEOUT_MS,
      ...CONNECTION_LIMITS,
      ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }),
    },
  };
  return Fastify(https) as unknown as FastifyInstance;
}

/** Every route of the server: admission, probes, metrics; every error answered through one handler. */
export function buildApp(options: AppOptions): FastifyInstance {
  const { logger, readiness, metrics, closing } = options;
  const app = createFastify(options.tls);
  const connections = limitConnections(app.server as unknown as HttpServer, options.tls !== undefined);
  metrics?.watchConnections(connections);
  if (options.tls !== undefined)
    watchHandshakeFailures(app.server as unknown as TlsServer, logger, (reason) => metrics?.handshakeFailed(reason));
  if (options.tls?.clientCa !== undefined) refuseUnknownClients(app.server as unknown as TlsServer, options.tls, options);
  app.setErrorHandler((raw: FastifyError, request, reply) => {
    const error = asWebhookError(raw, request);
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
  // An unknown path is answered by the same handler, as the coded 404.
  app.setNotFoundHandler(async (request) => {
    throw new NotFoundError(request.method, request.url.slice(0, BOUNDS.echoChars));
  });
  if (closing !== undefined) {
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing()) reply.header('connection', 'close');
      done(null, payload);
    });
  }
  // The one place the server is assembled. Each plugin declares the ones it needs before it (fastify-plugin's
  // `dependencies`), and fastify closes them in the reverse order: the probe port first, then the routes (their
  // last records flushed), then the claims and events in flight, then the class watches and the certificate.
  const parts = options.parts ?? {};
  void app.register(certificateReload, { certificate: parts.certificate, clientCa: options.tls?.clientCa });
  void app.register(classSource, { source: parts.classes });
  void app.register(defaultAgreement, { agreement: parts.agreement });
  void app.register(denialEvents, { events: parts.events });
  void app.register(admissionRoutes, options);
  // Its own scope: its body is read losslessly.
  void app.register(conversionRoutes, options);
  void app.register(probeRoutes, { readiness, metrics });
  void app.register(probePort, { probes: parts.probes });
  return app;
}

/** /healthz, /readyz and /metrics: on the HTTPS port, and on the plain probe port when there is one. */
async function probeRoutes(
  app: FastifyInstance,
  { readiness, metrics }: { readonly readiness: Readiness; readonly metrics: AppOptions['metrics'] },
): Promise<void> {
  if (metrics !== undefined) {
    app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.text()));
  }
  app.get('/healthz', async (_request, reply) => reply.type('text/plain').send('ok'));
  app.get('/readyz', async (request, reply) => {
    const checks = readiness.checks();
    const reasons = readinessProblems(checks);
    if (Object.hasOwn(request.query as object, 'verbose'))
      return reply
        .code(reasons.length === 0 ? 200 : 503)
        .type('text/plain')
        .send(verboseReadiness(checks));
    if (reasons.length === 0) return reply.type('text/plain').send('ok');
    return reply
      .code(503)
      .type('text/plain')
      .send(`not ready: ${reasons.join('; ')}`);
  });
}

/**
 * The plain-HTTP probe port (`--probe-port`): with mutual TLS the kubelet, which has no client certificate,
 * probes here. It answers only /healthz, /readyz and /metrics; nothing on it changes or decides anything.
 */
export function buildProbeApp(readiness: Readiness, metrics: AppOptions['metrics']): FastifyInstance {
  const app = Fastify({ logger: false, exposeHeadRoutes: false, schemaController: NO_ROUTE_SCHEMAS, http: CONNECTION_LIMITS });
  void app.register(probeRoutes, { readiness, metrics });
  return app;
}

/** The names a client certificate gives: its CN and its DNS SANs. */
function clientNames(socket: TLSSocket): string[] {
  const cert = socket.getPeerCertificate();
  const cn = cert.subject?.CN;
  const sans = (cert.subjectaltname ?? '')
    .split(', ')
    .filter((n) => n.startsWith('DNS:'))
    .map((n) => n.slice(4));
  return [...(typeof cn === 'string' ? [cn] : []), ...sans];
}

/** With mutual TLS: counts refused handshakes, and cuts a verified client whose names are not allowed. */
function refuseUnknownClients(server: TlsServer, tls: NonNullable<AppOptions['tls']>, options: AppOptions): void {
  server.on('tlsClientError', () => options.metrics?.clientRefused('handshake'));
  const allowed = new Set(tls.allowedClientNames ?? []);
  if (allowed.size === 0) return;
  server.on('secureConnection', (socket: TLSSocket) => {
    const names = clientNames(socket);
    if (names.some((n) => allowed.has(n))) return;
    options.metrics?.clientRefused('name');
    options.logger.debug(
      { names: names.slice(0, BOUNDS.clientNamesLogged) },
      'refused a client certificate whose names are not allowed',
    );
    socket.destroy();
  });
}
