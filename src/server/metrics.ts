import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ReviewOutcome } from '../admission/review.js';
import type { ClassKind } from '../classes/class-view.js';
import { DurationHistogram } from './duration-histogram.js';

const PREFIX = 'snapshot_webhook_';

/** What the class cache reports for metrics; absent in standalone mode. */
export interface CacheStatus {
  status(): readonly {
    kind: ClassKind;
    synced: boolean;
    objects: number;
    restarts: number;
    secondsSinceLastEvent: number | undefined;
  }[];
}

export interface MetricSources {
  readonly cache?: CacheStatus;
  /** Seconds until the serving certificate expires; undefined when none is loaded. */
  readonly certificateSecondsLeft: () => number | undefined;
}

/**
 * Counts kept in a Map and copied into a prom-client counter when it is scraped: an increment here costs tens
 * of nanoseconds, prom-client's labelled `inc` about 1 µs (it validates and hashes the labels every time),
 * and the admission path makes two or three of them per request.
 */
class Tally<L extends string> {
  private readonly counts = new Map<string, { readonly labels: Record<L, string>; n: number }>();

  constructor(name: string, help: string, labelNames: readonly L[], registry: Registry) {
    const counts = this.counts;
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, n } of counts.values()) this.inc(labels, n);
      },
    });
  }

  /** `key` is unique per label set (the caller joins the values); `labels` is built only for a new key. */
  add(key: string, labels: () => Record<L, string>): void {
    const entry = this.counts.get(key);
    if (entry === undefined) this.counts.set(key, { labels: labels(), n: 1 });
    else entry.n++;
  }
}

/**
 * Prometheus metrics (prom-client), served on the admission port at GET /metrics. Every name has the
 * `snapshot_webhook_` prefix; docs/metrics.md lists them with alert rules.
 */
export class WebhookMetrics {
  readonly registry = new Registry();
  private readonly requests = new Tally(
    `${PREFIX}admission_requests_total`,
    'Admission requests answered, by API group, resource, operation and decision (allowed, denied, warned).',
    ['group', 'resource', 'operation', 'decision'],
    this.registry,
  );
  private readonly findings = new Tally(
    `${PREFIX}rule_findings_total`,
    'Rule findings by rule and effect (denied, warned: a denial softened by warn mode, warning).',
    ['rule', 'effect'],
    this.registry,
  );
  private readonly duration = new DurationHistogram(
    `${PREFIX}admission_duration_seconds`,
    'Time from the whole request body to the answer (parsing, rules, decision), in seconds.',
    // Decisions take tens of microseconds; the top buckets catch GC pauses and a starved event loop.
    [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
    this.registry,
  );
  /** Admission requests between their headers and their answer; a plain number, read when scraped. */
  inFlight = 0;
  private readonly malformed = new Counter({
    name: `${PREFIX}malformed_requests_total`,
    help: 'Requests refused before the rules ran (HTTP 4xx), by error code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  private readonly events = new Counter({
    name: `${PREFIX}denial_events_total`,
    help: 'Kubernetes Events for denied UPDATEs, by result (sent, failed, dropped: queue full, limited: rate limit).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    const inFlight = (): number => this.inFlight;
    new Gauge({
      name: `${PREFIX}admission_in_flight_requests`,
      help: 'Admission requests being answered now (from their headers to their answer).',
      registers: [this.registry],
      collect() {
        this.set(inFlight());
      },
    });
    const cache = sources.cache;
    const byKind = <T>(
      pick: (s: ReturnType<CacheStatus['status']>[number]) => T | undefined,
      set: (kind: ClassKind, v: T) => void,
    ): void => {
      for (const s of cache?.status() ?? []) {
        const value = pick(s);
        if (value !== undefined) set(s.kind, value);
      }
    };
    new Gauge({
      name: `${PREFIX}class_cache_synced`,
      help: '1 when the class cache of a kind has listed at least once and its watch is healthy.',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        byKind(
          (s) => (s.synced ? 1 : 0),
          (kind, v) => this.set({ kind }, v),
        );
      },
    });
    new Gauge({
      name: `${PREFIX}class_cache_objects`,
      help: 'Classes in the cache, by kind.',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        byKind(
          (s) => s.objects,
          (kind, v) => this.set({ kind }, v),
        );
      },
    });
    new Gauge({
      name: `${PREFIX}class_cache_seconds_since_last_event`,
      help: 'Seconds since the last list or watch event of a kind (how stale the cache may be).',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        byKind(
          (s) => s.secondsSinceLastEvent,
          (kind, v) => this.set({ kind }, v),
        );
      },
    });
    new Counter({
      name: `${PREFIX}informer_restarts_total`,
      help: 'Informer restarts after a watch failed, by kind.',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        byKind(
          (s) => s.restarts,
          (kind, v) => this.inc({ kind }, v),
        );
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
  }

  observe(outcome: ReviewOutcome, durationMs: number): void {
    const { request, decision, evaluation } = outcome;
    const effect = decision.allowed ? (decision.softened ? 'warned' : 'allowed') : 'denied';
    const { group, resource } = request.resource;
    const operation = request.operation;
    this.requests.add(`${group}\u0000${resource}\u0000${operation}\u0000${effect}`, () => ({
      group,
      resource,
      operation,
      decision: effect,
    }));
    this.duration.observe(resource, durationMs / 1000);
    for (const finding of evaluation.findings) {
      // A denying finding in an allowed answer was softened by warn mode.
      const kind = finding.warning === true ? 'warning' : decision.allowed ? 'warned' : 'denied';
      this.findings.add(`${finding.rule}\u0000${kind}`, () => ({ rule: finding.rule, effect: kind }));
    }
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
