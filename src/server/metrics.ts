import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ReviewOutcome } from '../admission/review.js';
import { packageVersion } from '../config/version.js';
import type { ConnectionCounts } from './connection-limit.js';
import type { HandshakeFailure } from './handshake-failures.js';
import type { Permission } from '../cluster/permissions.js';
import type { ConversionOutcome } from '../conversion/conversion-review.js';
import { CONVERSION_KINDS, CONVERSION_VERSIONS, GROUP } from '../conversion/convert-object.js';
import type { CacheStatus } from '../classes/class-source.js';
import { CLASS_KINDS, type ClassKind } from '../classes/class-kinds.js';
import { BOUNDS } from '../limits/bounds.js';

const PREFIX = 'snapshot_webhook_';

/** Label values for what a request names: only the values this webhook knows, so a request cannot add series. */
const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
const OTHER = 'other';

export interface MetricSources {
  readonly cache?: CacheStatus;
  /** Seconds until the serving certificate expires; undefined when none is loaded. */
  readonly certificateSecondsLeft: () => number | undefined;
  /** Log lines dropped because stdout was not read. */
  readonly logLinesDropped?: () => number;
  /** Drivers with a default class, and how many defaults each has (the cache's view). */
  readonly defaultCounts?: (kind: ClassKind) => ReadonlyMap<string, number>;
  /** The RBAC a live cluster must grant, as last asked. */
  readonly permissions?: { readonly permissions: readonly Permission[]; missing(): readonly Permission[] };
}

type CacheEntry = ReturnType<CacheStatus['status']>[number];

/** A gauge per class kind, read from the cache when scraped. */
function cacheGauge(
  registry: Registry,
  cache: CacheStatus | undefined,
  name: string,
  help: string,
  pick: (s: CacheEntry) => number | undefined,
): void {
  new Gauge({
    name: `${PREFIX}${name}`,
    help,
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      for (const s of cache?.status() ?? []) {
        const value = pick(s);
        if (value !== undefined) this.set({ kind: s.kind }, value);
      }
    },
  });
}

/**
 * Prometheus metrics (prom-client), served on the admission port at GET /metrics. Every name has the
 * `snapshot_webhook_` prefix; docs/metrics.md lists them with alert rules.
 */
export class WebhookMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: `${PREFIX}admission_requests_total`,
    help: 'Admission requests answered, by API group, resource, operation and decision (allowed, denied, warned).',
    labelNames: ['group', 'resource', 'operation', 'decision'] as const,
    registers: [this.registry],
  });
  private readonly findings = new Counter({
    name: `${PREFIX}rule_findings_total`,
    help: 'Rule findings by rule and effect (denied, warned: a denial softened by warn mode, warning).',
    labelNames: ['rule', 'effect'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: `${PREFIX}admission_duration_seconds`,
    help: 'Time from the whole request body to the decision (parsing, rules), in seconds.',
    labelNames: ['resource'] as const,
    // Decisions take tens of microseconds; the top buckets catch GC pauses and a starved event loop.
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
    registers: [this.registry],
  });
  /** Admission requests between their headers and their answer. */
  readonly inFlight = new Gauge({
    name: `${PREFIX}admission_in_flight_requests`,
    help: 'Admission requests being answered now (from their headers to their answer).',
    registers: [this.registry],
  });
  private readonly malformed = new Counter({
    name: `${PREFIX}malformed_requests_total`,
    help: 'Requests refused before the rules ran (HTTP 4xx), by error code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  private readonly conversions = new Counter({
    name: `${PREFIX}conversions_total`,
    help: 'Objects converted between group snapshot API versions, by kind, from and to version, and result.',
    labelNames: ['kind', 'from', 'to', 'result'] as const,
    registers: [this.registry],
  });
  private readonly conversionDuration = new Histogram({
    name: `${PREFIX}conversion_duration_seconds`,
    help: 'Time from the whole ConversionReview body to the answer, in seconds.',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
    registers: [this.registry],
  });
  private readonly events = new Counter({
    name: `${PREFIX}denial_events_total`,
    help: 'Kubernetes Events for denied UPDATEs, by result (sent, failed, dropped: queue full, limited: rate limit).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly refused = new Counter({
    name: `${PREFIX}tls_clients_refused_total`,
    help: 'Connections refused by mutual TLS: a failed handshake (no or an unknown client certificate), or a name not allowed.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly handshakeFailures = new Counter({
    name: `${PREFIX}tls_handshake_failures_total`,
    help: 'Failed TLS handshakes on the HTTPS port, by reason (certificate-rejected: the client does not trust the serving certificate, a wrong caBundle; client-certificate, not-tls, aborted, other).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  handshakeFailed(reason: HandshakeFailure): void {
    this.handshakeFailures.inc({ reason });
  }

  clientRefused(reason: 'handshake' | 'name'): void {
    this.refused.inc({ reason });
  }

  /** The listener's connections, once it exists (buildApp). */
  private connections: ConnectionCounts | undefined;

  watchConnections(counts: ConnectionCounts): void {
    this.connections = counts;
  }

  constructor(sources: MetricSources) {
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    const { cache } = sources;
    cacheGauge(
      this.registry,
      cache,
      'class_cache_synced',
      '1 when the class cache of a kind has listed at least once and its watch is healthy.',
      (s) => (s.synced ? 1 : 0),
    );
    cacheGauge(this.registry, cache, 'class_cache_objects', 'Classes in the cache, by kind.', (s) => s.objects);
    cacheGauge(
      this.registry,
      cache,
      'class_cache_seconds_since_last_event',
      'Seconds since the last list or watch event of a kind (how stale the cache may be).',
      (s) => s.secondsSinceLastEvent,
    );
    new Counter({
      name: `${PREFIX}informer_restarts_total`,
      help: 'Informer restarts after a watch failed, by kind.',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const s of cache?.status() ?? []) this.inc({ kind: s.kind as ClassKind }, s.restarts);
      },
    });
    new Gauge({
      name: `${PREFIX}serving_certificate_expiry_seconds`,
      help: 'Seconds until the serving certificate expires (negative once expired).',
      registers: [this.registry],
      collect() {
        const left = sources.certificateSecondsLeft();
        if (left !== undefined) this.set(left);
      },
    });
    const { defaultCounts } = sources;
    new Gauge({
      name: `${PREFIX}default_classes`,
      help: `Classes that are a default for their driver, by kind and driver, from the cache (at most ${BOUNDS.driverSeries} drivers per kind, the most defaults first). Above 1, new snapshots that name no class fail.`,
      labelNames: ['kind', 'driver'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        if (defaultCounts === undefined) return;
        for (const kind of CLASS_KINDS) {
          const counts = [...defaultCounts(kind)].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
          for (const [driver, count] of counts.slice(0, BOUNDS.driverSeries))
            this.set({ kind, driver: driver.slice(0, BOUNDS.driverChars) }, count);
        }
      },
    });
    const { permissions } = sources;
    new Gauge({
      name: `${PREFIX}permission_missing`,
      help: 'In cluster mode, how many permissions the webhook needs and lacks, by verb and resource (manifests/base/rbac.yaml grants them all; a verb on the two claim Leases counts each). 0 when granted.',
      labelNames: ['verb', 'resource'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        if (permissions === undefined) return;
        const missing = new Set(permissions.missing());
        for (const p of permissions.permissions) {
          const labels = { verb: p.verb, resource: `${p.resource}${p.group === '' ? '' : `.${p.group}`}` };
          // One series per verb and resource: a Lease permission on either claim Lease counts.
          this.inc(labels, missing.has(p) ? 1 : 0);
        }
      },
    });
    const connections = (): ConnectionCounts | undefined => this.connections;
    new Gauge({
      name: `${PREFIX}connections`,
      help: `Open connections to the HTTPS port (at most ${BOUNDS.connections}; past it idle ones, then the oldest, are closed).`,
      registers: [this.registry],
      collect() {
        this.set(connections()?.open() ?? 0);
      },
    });
    new Counter({
      name: `${PREFIX}connections_evicted_total`,
      help: 'Connections closed to keep the open ones within the limit.',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(connections()?.evicted() ?? 0);
      },
    });
    new Gauge({
      name: `${PREFIX}build_info`,
      help: 'Always 1; the labels say which build runs (the package version and the Node.js version).',
      labelNames: ['version', 'node'] as const,
      registers: [this.registry],
    }).set({ version: packageVersion(), node: process.versions.node }, 1);
    const dropped = sources.logLinesDropped;
    new Counter({
      name: `${PREFIX}log_lines_dropped_total`,
      help: 'Log lines dropped because stdout was not read fast enough (4 MiB held at most).',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(dropped?.() ?? 0);
      },
    });
  }

  observe(outcome: ReviewOutcome, durationMs: number): void {
    const { request, decision, evaluation } = outcome;
    const effect = decision.allowed ? (decision.softened ? 'warned' : 'allowed') : 'denied';
    // The route's names, not the request's: a resource this webhook does not handle is `other`.
    const group = evaluation.route?.group ?? OTHER;
    const resource = evaluation.route?.resource ?? OTHER;
    const operation = OPERATIONS.has(request.operation) ? request.operation : OTHER;
    this.requests.inc({ group, resource, operation, decision: effect });
    this.duration.observe({ resource }, durationMs / 1000);
    for (const finding of evaluation.findings) {
      // A denying finding in an allowed answer was softened by warn mode.
      const kind = finding.warning === true ? 'warning' : decision.allowed ? 'warned' : 'denied';
      this.findings.inc({ rule: finding.rule, effect: kind });
    }
  }

  observeConversion(outcome: ConversionOutcome, durationMs: number): void {
    const version = (apiVersion: string): string => CONVERSION_VERSIONS.find((v) => apiVersion === `${GROUP}/${v}`) ?? OTHER;
    const to = version(outcome.request.desiredAPIVersion);
    const result = outcome.failure === undefined ? 'success' : 'failure';
    outcome.kinds.forEach((kind, i) => {
      const known = CONVERSION_KINDS.find((k) => k === kind) ?? OTHER;
      this.conversions.inc({ kind: known, from: version(outcome.fromVersions[i] ?? ''), to, result });
    });
    this.conversionDuration.observe(durationMs / 1000);
  }

  eventResult(result: string): void {
    this.events.inc({ result });
  }

  malformedRequest(code: string): void {
    this.malformed.inc({ code });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
