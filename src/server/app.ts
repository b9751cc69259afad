import type { Server as HttpsServer } from 'node:https';
import Fastify, {
  type FastifyHttpsOptions,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyServerOptions,
} from 'fastify';
import { MIN_TLS_VERSION } from '../certs/serving-pair.js';
import type { ClassSource } from '../classes/class-source.js';
import type { DenialEvents } from '../cluster/denial-events.js';
import { BOUNDS } from '../limits/bounds.js';
import type { Logger } from '../log/logger.js';
import type { DefaultAgreement } from '../rules/default-claim.js';
import type { WebhookMetrics } from './metrics.js';
import { ADMISSION_PATHS, admissionRoutes, type AdmissionRouteOptions } from './plugins/admission-routes.js';
import { certificateReload } from './plugins/certificate-reload.js';
import { classSource } from './plugins/class-source.js';
import { closingConnections } from './plugins/closing-connections.js';
import { codedErrors } from './plugins/coded-errors.js';
import { connections, type ListenerTls } from './plugins/connections.js';
import { conversionRoutes } from './plugins/conversion-routes.js';
import { defaultAgreement } from './plugins/default-agreement.js';
import { denialEvents } from './plugins/denial-events.js';
import { jsonBody } from './plugins/json-body.js';
import { probePort, type ProbePortOptions } from './plugins/probe-port.js';
import { PROBE_PATHS, probeRoutes, type Readiness } from './plugins/probe-routes.js';
import type { ServingCertificate } from './serving-certificate.js';

export type { Readiness, ReadinessCheck } from './plugins/probe-routes.js';

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

export interface AppOptions extends AdmissionRouteOptions {
  readonly readiness: Readiness;
  /** Serving certificate and key (plugins/connections.ts); omitted for plain HTTP on loopback (tests only). */
  readonly tls?: ListenerTls;
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

const FASTIFY_OPTIONS = {
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

/** A fastify instance over HTTPS with `tls`, or over plain HTTP without (the probe port; tests). */
function createFastify(tls: ListenerTls | undefined): FastifyInstance {
  if (tls === undefined) return Fastify({ ...FASTIFY_OPTIONS, http: CONNECTION_LIMITS });
  // fastify types an HTTPS instance apart; the parts here do not depend on which server it is.
  const https: FastifyHttpsOptions<HttpsServer> = {
    ...FASTIFY_OPTIONS,
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

/** One part of a listener: a named plugin with its options, and the names fastify-plugin's metadata declares. */
export interface ListenerPart {
  readonly name: string;
  readonly dependencies: readonly string[];
  readonly register: (app: FastifyInstance) => void;
}

/** A part made of `plugin` (wrapped by fastify-plugin, with a name) and the options it takes. */
function part<Options extends object>(plugin: FastifyPluginAsync<Options>, options: Options): ListenerPart {
  const meta = (plugin as unknown as { [key: symbol]: { name?: string; dependencies?: string[] } | undefined })[
    Symbol.for('plugin-meta')
  ];
  if (meta?.name === undefined) throw new Error('a part of a listener is a named fastify plugin');
  return { name: meta.name, dependencies: meta.dependencies ?? [], register: (app) => void app.register(plugin, options) };
}

/**
 * A listener: a fastify instance and its parts, registered in this order. Each part declares the parts it needs
 * before it (fastify-plugin's `dependencies`, checked at registration); fastify runs their onClose hooks in the
 * reverse order (test/server/listener-parts.test.ts).
 */
function listener(tls: ListenerTls | undefined, parts: readonly ListenerPart[]): FastifyInstance {
  const app = createFastify(tls);
  for (const p of parts) p.register(app);
  return app;
}

/**
 * The admission listener (HTTPS): admission, conversion, probes and metrics. On close: the probe port first, then
 * the routes (their last records flushed), then the claims and events in flight, then the class watches and the
 * certificate.
 */
export function buildApp(options: AppOptions): FastifyInstance {
  return listener(options.tls, admissionParts(options));
}

/** The admission listener's parts, in their order. */
export function admissionParts(options: AppOptions): ListenerPart[] {
  const { logger, metrics, readiness } = options;
  const parts = options.parts ?? {};
  return [
    part(codedErrors, { logger, metrics, paths: `admission paths are POST ${ADMISSION_PATHS.join(', ')}` }),
    part(connections, { tls: options.tls, logger, metrics }),
    part(closingConnections, { closing: options.closing }),
    part(jsonBody, {}),
    part(certificateReload, { certificate: parts.certificate, clientCa: options.tls?.clientCa }),
    part(classSource, { source: parts.classes }),
    part(defaultAgreement, { agreement: parts.agreement }),
    part(denialEvents, { events: parts.events }),
    part(admissionRoutes, options),
    part(conversionRoutes, options),
    part(probeRoutes, { readiness, metrics }),
    part(probePort, { probes: parts.probes }),
  ];
}

/**
 * The plain-HTTP probe listener (`--probe-port`): with mutual TLS the kubelet, which has no client certificate,
 * probes here. It answers only /healthz, /readyz and /metrics, errors and unknown paths as the admission listener
 * does; nothing on it changes or decides anything.
 */
export function buildProbeApp(readiness: Readiness, metrics: WebhookMetrics | undefined, logger: Logger): FastifyInstance {
  return listener(undefined, probeParts(readiness, metrics, logger));
}

/** The probe listener's parts, in their order. */
export function probeParts(readiness: Readiness, metrics: WebhookMetrics | undefined, logger: Logger): ListenerPart[] {
  return [
    part(codedErrors, { logger, metrics, paths: `probe paths are GET ${PROBE_PATHS.join(', ')}` }),
    part(probeRoutes, { readiness, metrics }),
  ];
}
