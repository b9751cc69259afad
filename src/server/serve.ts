import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { reserveAdmittedDefaults, type ReviewOutcome } from '../admission/review.js';
import type { DefaultAgreement } from '../rules/default-claim.js';
import { ClassIndex } from '../classes/class-index.js';
import { fixedClassSource, type ClassSource } from '../classes/class-source.js';
import { CLASS_KINDS } from '../classes/class-kinds.js';
import { DenialEvents, type EventSink } from '../cluster/denial-events.js';
import type { ServeOptions } from '../config/serve-options.js';
import { packageVersion } from '../config/version.js';
import { createLogger, logLinesDropped, type Logger } from '../log/logger.js';
import { allRoutes } from '../rules/table.js';
import { buildApp, buildProbeApp, type Readiness, type ServerParts } from './app.js';
import { WebhookMetrics } from './metrics.js';
import { ServingCertificate } from './serving-certificate.js';
import type { PermissionCheck } from '../cluster/permissions.js';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly port: number;
  readonly classes: ClassSource;
  /** Not ready at once, keep serving for the shutdown delay, then close (fastify's onClose stops the rest). */
  shutdown(reason: string): Promise<void>;
}

interface Classes {
  readonly source: ClassSource;
  /** Where denial events go; only a live cluster has one. */
  readonly events?: EventSink;
  /** How replicas agree on a driver's default; without a cluster, this process alone decides. */
  readonly agreement?: DefaultAgreement;
  /** The RBAC a live cluster must grant, as last asked. */
  readonly permissions?: PermissionCheck;
}

async function connectClasses(options: ServeOptions, logger: Logger): Promise<Classes> {
  if (options.classesFrom !== undefined) {
    // Loaded only here: the YAML parser is not needed to serve a cluster's classes.
    const { loadStaticClasses } = await import('../classes/static-classes.js');
    const index = loadStaticClasses(options.classesFrom);
    const counts = Object.fromEntries(CLASS_KINDS.map((k) => [k, index.count(k)]));
    logger.info({ classesFrom: options.classesFrom, ...counts }, 'classes loaded from manifests (no cluster)');
    return { source: fixedClassSource(index, 'manifests') };
  }
  const inCluster = process.env.KUBERNETES_SERVICE_HOST !== undefined && existsSync(IN_CLUSTER_TOKEN);
  if (options.kubeconfig !== undefined || inCluster) {
    // Loaded only here: @kubernetes/client-node costs tens of MB and most of the start time.
    const { connectCluster } = await import('../cluster/cluster-class-source.js');
    const cluster = connectCluster({
      kubeconfig: options.kubeconfig,
      namespace: options.namespace,
      logger,
      discoveryIntervalMs: options.discoveryIntervalMs,
    });
    const { classes, events, agreement, permissions } = cluster;
    return { source: classes, events, agreement, permissions };
  }
  logger.warn('no cluster configured and no --classes-from: standalone with no classes');
  return { source: fixedClassSource(ClassIndex.withNoClasses(), 'standalone') };
}

/** The client CA of mutual TLS, read once at start: a missing or unreadable file stops the start. */
function readClientCa(file: string | undefined): Buffer | undefined {
  if (file === undefined) return undefined;
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (error) {
    throw new Error(`--client-ca-file ${file}: ${(error as Error).message}`, { cause: error });
  }
  if (!pem.toString('utf8').includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`--client-ca-file ${file}: no PEM certificate in it`);
  return pem;
}

/** A stand-in certificate so probes can be answered (not ready) until a valid pair appears. */
async function placeholderTls(): Promise<{ cert: Buffer; key: Buffer }> {
  const { makeCa, makeServingCert } = await import('../certs/make-certs.js');
  const ca = await makeCa('snapshot-webhook placeholder', 1);
  const pair = await makeServingCert(ca, { commonName: 'placeholder', dnsNames: ['localhost'], days: 1 });
  return { cert: Buffer.from(pair.certPem), key: Buffer.from(pair.keyPem) };
}

/** What the metrics read: the class cache, the certificate's time left, dropped log lines, defaults per driver. */
function metricsFor(classes: ClassSource, certificate: ServingCertificate, permissions?: PermissionCheck): WebhookMetrics {
  return new WebhookMetrics({
    ...(permissions === undefined ? {} : { permissions }),
    ...(classes.cacheStatus === undefined ? {} : { cache: classes.cacheStatus }),
    certificateSecondsLeft: () => {
      const notAfter = certificate.current?.notAfter;
      return notAfter === undefined ? undefined : (notAfter.getTime() - Date.now()) / 1000;
    },
    logLinesDropped,
    defaultCounts: (kind) => classes.index.defaultCounts(kind),
  });
}

/** The probe server with where it listens, or undefined without a probe port. */
function probesAt(probes: FastifyInstance | undefined, options: ServeOptions): ServerParts['probes'] {
  return probes === undefined ? undefined : { app: probes, port: options.probePort, host: options.bindAddress };
}

/**
 * Starts the server: what can fail without opening anything first (flags, files, kubeconfig), then the
 * long-lived parts as fastify plugins, each closed by fastify's onClose in reverse order, also when the start
 * fails half way (a busy port): then everything opened is closed again and the error is thrown.
 */
export async function startServer(options: ServeOptions, logger = createLogger(options.logLevel)): Promise<RunningServer> {
  // Build the route table before the first request, not during it (the validators are compiled ahead of time).
  allRoutes();
  if (options.ignoredFlags.length > 0) {
    logger.warn(
      { flags: options.ignoredFlags.map((f) => `--${f}`) },
      "upstream's klog flags accepted and ignored: logs are JSON lines on stdout",
    );
  }
  const clientCa = readClientCa(options.clientCaFile);
  const { source: classes, events: eventSink, agreement, permissions } = await connectClasses(options, logger);
  const certificate = new ServingCertificate(options.tlsCertFile, options.tlsKeyFile, logger);
  const tls = certificate.current ?? (await placeholderTls());
  const state = { listening: false, stopping: false };
  const readiness: Readiness = {
    checks: () => [
      { name: 'shutdown', problems: state.stopping ? ['shutting down'] : [] },
      { name: 'listening', problems: state.listening ? [] : ['not listening yet'] },
      { name: 'certificate', problems: [certificate.notReadyReason()].filter((r) => r !== undefined) },
      { name: 'classes', problems: classes.notReadyReasons() },
      // Shown by /readyz?verbose, never counted: without a permission only some writes fail (503), and an unready
      // webhook with failurePolicy Fail would block every snapshot write (docs/operations.md).
      ...(permissions === undefined ? [] : [{ name: 'permissions', informational: true, problems: permissions.problems() }]),
    ],
  };
  const metrics = metricsFor(classes, certificate, permissions);
  const events =
    eventSink === undefined ? undefined : new DenialEvents(eventSink, logger, undefined, (r) => metrics.eventResult(r));
  const probes = options.probePort === 0 ? undefined : buildProbeApp(readiness, metrics, logger);
  const app = buildApp({
    review: {
      classes: classes.index,
      options: { preventVolumeModeConversion: options.preventVolumeModeConversion },
      modes: { mode: options.mode, warnRules: options.warnRules },
      // With a cluster the Lease's claims count a default admitted a moment ago, on every replica; without
      // one this process reserves it in its own index.
      ...(agreement === undefined ? { admitted: reserveAdmittedDefaults(classes.index) } : { agreement }),
    },
    logger,
    readiness,
    tls: {
      cert: tls.cert,
      key: tls.key,
      ...(clientCa === undefined ? {} : { clientCa, allowedClientNames: options.allowedClientNames }),
    },
    metrics,
    closing: () => state.stopping,
    ...(events === undefined ? {} : { onDecision: (outcome: ReviewOutcome) => events.record(outcome) }),
    parts: { certificate, classes, agreement, events, probes: probesAt(probes, options) },
  });
  try {
    // Starts every part in its declared order (app.ts), then listens.
    await app.listen({ port: options.port, host: options.bindAddress });
  } catch (error) {
    await app.close();
    throw error;
  }
  state.listening = true;
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  logger.info(
    {
      address: options.bindAddress,
      port,
      classes: classes.mode,
      mode: options.mode,
      version: packageVersion(),
      mutualTls: clientCa !== undefined,
      ...(probes === undefined ? {} : { probePort: options.probePort }),
    },
    'serving admission reviews over HTTPS',
  );
  return {
    app,
    port,
    classes,
    shutdown: async (reason: string) => {
      if (state.stopping) return;
      state.stopping = true;
      logger.info({ reason, delayMs: options.shutdownDelayMs }, 'shutting down: not ready, still serving while endpoints drain');
      await new Promise((resolve) => setTimeout(resolve, options.shutdownDelayMs));
      await app.close();
      logger.info('stopped');
    },
  };
}
