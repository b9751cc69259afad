import type { ClassIndex } from '../classes/class-index.js';
import { CLASS_KIND_FACTS, CLASS_KINDS, type ClassKind } from '../classes/class-kinds.js';
import type { Logger } from '../log/logger.js';
import { statusOf } from './apiserver-error.js';
import type { ClassResource, ClassWatch, ClusterApi } from './cluster-api.js';
import { BOUNDS } from '../limits/bounds.js';

export interface WatcherTiming {
  /** How often served API groups are listed again, so CRDs installed later are picked up. */
  readonly rediscoverMs: number;
  /** Restart backoff: base doubled per failed attempt up to max, each with +-20% jitter. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** How often a synced kind's apiserver is asked a small question (a list of one), and how long it may take. */
  readonly probeEveryMs: number;
  readonly probeTimeoutMs: number;
  /** A synced watch with no event, bookmark or reconnect for this long is dead: restarted. */
  readonly silenceMs: number;
  /** A kind that gated readiness and has been broken this long makes the server not ready. */
  readonly staleUnreadyMs: number;
}

/**
 * Rediscovery each minute costs one small request. Backoff from 1 s to 5 s (±20%): a list every few seconds
 * per replica does not burden an apiserver that is down, and the cache resumes within about 6 s of its return.
 */
export const DEFAULT_TIMING: WatcherTiming = {
  rediscoverMs: 60_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 5_000,
  // A frozen apiserver is noticed within 13 s; one request per kind every 10 s per replica is nothing to it.
  probeEveryMs: 10_000,
  probeTimeoutMs: 3_000,
  // The server-side watch timeout is 60 s (client-node-api.ts): a live watch speaks at least that often.
  silenceMs: 90_000,
  // Long enough that a restart or a blip never flaps readiness.
  staleUnreadyMs: 30_000,
};

type WatchState = 'unknown' | 'not-served' | 'syncing' | 'synced' | 'broken' | 'forbidden';

class KindWatcher {
  state: WatchState = 'unknown';
  version: string | undefined;
  watch: ClassWatch | undefined;
  everSynced = false;
  /** Found at the first discovery: the server is not ready until it syncs. A kind found later never
   * makes a ready server unready (decisions needing it deny until it syncs). */
  gatesReadiness = false;
  lastEventAt: number | undefined;
  brokenSince: number | undefined;
  problem: string | undefined;
  probing = false;
  failures = 0;
  restarts = 0;
  retry: NodeJS.Timeout | undefined;
  constructor(readonly kind: ClassKind) {}
}

/** The resource a watcher reads: its kind's group and plural at the version discovery found. */
const resourceOf = (w: KindWatcher): ClassResource => {
  const { group, resource } = CLASS_KIND_FACTS[w.kind];
  return { group, plural: resource, version: w.version as string };
};

/** The group and resource of every class kind, as discovery is asked for them. */
export const CLASS_DISCOVERY = CLASS_KINDS.map((kind) => ({
  group: CLASS_KIND_FACTS[kind].group,
  plural: CLASS_KIND_FACTS[kind].resource,
}));

export interface KindStatus {
  readonly kind: ClassKind;
  readonly state: WatchState;
  readonly synced: boolean;
  readonly objects: number;
  readonly restarts: number;
  /** Seconds since the last list or watch event; undefined before the first. */
  readonly secondsSinceLastEvent: number | undefined;
}

/**
 * Keeps the class index in step with the cluster: discovers which class kinds are served, watches each with
 * an informer, restarts a failed informer with backoff and jitter (client-node's stops after any error other
 * than 410), and keeps the last good contents while a watch is broken.
 */
export class ClassWatchers {
  private readonly watchers = new Map<ClassKind, KindWatcher>(CLASS_KINDS.map((k) => [k, new KindWatcher(k)]));
  private discovered = false;
  private discoveryProblem: string | undefined;
  private discoveryFailures = 0;
  private rediscover: NodeJS.Timeout | undefined;
  private liveness: NodeJS.Timeout | undefined;
  /** The next discovery while the first has not succeeded (stored so that stop clears it). */
  private discoveryRetry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly index: ClassIndex,
    private readonly api: ClusterApi,
    private readonly logger: Logger,
    private readonly timing: WatcherTiming = DEFAULT_TIMING,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    await this.discover();
    this.rediscover = setInterval(() => void this.discover(), this.timing.rediscoverMs).unref();
    this.liveness = setInterval(() => this.checkLiveness(), this.timing.probeEveryMs).unref();
  }

  /**
   * A synced watch can look healthy while its apiserver is frozen or its stream is dead: each synced kind is
   * asked a small question, and a watch silent past the bound is restarted. Either failure counts as a broken
   * watch (not synced, restarted with backoff).
   */
  checkLiveness(): void {
    const now = this.now();
    for (const w of this.watchers.values()) {
      const current = w.watch;
      if (this.stopped || w.state !== 'synced' || current === undefined) continue;
      const silent = now - (w.lastEventAt ?? now);
      if (silent > this.timing.silenceMs) {
        this.onFailure(
          w,
          new Error(`the watch said nothing (no event, bookmark or reconnect) for ${Math.round(silent / 1000)} s`),
        );
        continue;
      }
      if (w.probing) continue;
      w.probing = true;
      this.api
        .probe(resourceOf(w), this.timing.probeTimeoutMs)
        .then(
          () => undefined,
          (error: unknown) => {
            if (w.watch === current && w.state === 'synced') this.onFailure(w, error);
          },
        )
        .finally(() => (w.probing = false));
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.rediscover);
    clearInterval(this.liveness);
    clearTimeout(this.discoveryRetry);
    for (const w of this.watchers.values()) {
      clearTimeout(w.retry);
      w.watch?.stop();
      w.watch = undefined;
    }
  }

  notReadyReasons(): string[] {
    if (!this.discovered) return [`cannot discover the cluster's API groups yet: ${this.discoveryProblem ?? 'starting'}`];
    const now = this.now();
    return [...this.watchers.values()].flatMap((w) => {
      if (!w.gatesReadiness || (w.state !== 'syncing' && w.state !== 'broken')) return [];
      if (!w.everSynced) return [`${w.kind} cache has not synced yet`];
      const stale = w.brokenSince === undefined ? 0 : now - w.brokenSince;
      if (w.state !== 'broken' || stale < this.timing.staleUnreadyMs) return [];
      return [`${w.kind} cache is stale for ${Math.round(stale / 1000)} s: ${w.problem ?? 'the watch is broken'}`];
    });
  }

  /** Whether a kind's cache is synced and its watch running: a decision may trust what it does not hold. */
  isHealthy(kind: ClassKind): boolean {
    return this.watchers.get(kind)?.state === 'synced';
  }

  status(): KindStatus[] {
    const now = this.now();
    return [...this.watchers.values()].map((w) => ({
      kind: w.kind,
      state: w.state,
      synced: w.state === 'synced',
      objects: this.index.count(w.kind),
      restarts: w.restarts,
      secondsSinceLastEvent: w.lastEventAt === undefined ? undefined : (now - w.lastEventAt) / 1000,
    }));
  }

  private backoff(failures: number): number {
    const base = Math.min(this.timing.backoffMaxMs, this.timing.backoffBaseMs * 2 ** Math.max(0, failures - 1));
    return Math.round(base * (0.8 + 0.4 * Math.random()));
  }

  /** Lists the served groups and starts or stops watches to match. Never throws. */
  async discover(): Promise<void> {
    if (this.stopped) return;
    let groups: ReadonlyMap<string, string>;
    try {
      groups = await this.api.servedGroups(CLASS_DISCOVERY);
    } catch (error) {
      if (this.stopped) return;
      this.discoveryFailures += 1;
      const message = (error as Error).message ?? String(error);
      if (message !== this.discoveryProblem)
        this.logger.warn({ err: message }, 'cannot list the API groups the cluster serves; retrying');
      this.discoveryProblem = message;
      if (!this.discovered) {
        for (const kind of CLASS_KINDS) this.index.setUnavailable(kind, `cannot reach the cluster: ${message}`);
        clearTimeout(this.discoveryRetry);
        this.discoveryRetry = setTimeout(() => void this.discover(), this.backoff(this.discoveryFailures)).unref();
      }
      return;
    }
    const first = !this.discovered;
    this.discovered = true;
    this.discoveryFailures = 0;
    this.discoveryProblem = undefined;
    for (const w of this.watchers.values()) {
      const version = groups.get(CLASS_KIND_FACTS[w.kind].group);
      if (first && version !== undefined) w.gatesReadiness = true;
      this.reconcile(w, version);
    }
  }

  private reconcile(w: KindWatcher, version: string | undefined): void {
    if (this.stopped) return;
    if (version === undefined) {
      if (w.state !== 'not-served') {
        this.logger.info({ kind: w.kind }, `the cluster does not serve ${w.kind} (CRD not installed); not watching it`);
      }
      w.watch?.stop();
      w.watch = undefined;
      w.state = 'not-served';
      this.index.setUnavailable(w.kind, `the cluster does not serve ${w.kind} (its CRD is not installed)`);
      return;
    }
    if (w.watch !== undefined && w.version === version) return;
    w.version = version;
    this.startWatch(w);
  }

  private startWatch(w: KindWatcher): void {
    w.watch?.stop();
    const current = this.api.watchClasses(resourceOf(w), {
      listed: (items) => {
        if (w.watch !== current) return;
        this.index.replaceAll(w.kind, items);
        if (w.brokenSince !== undefined) {
          const seconds = Math.round((this.now() - w.brokenSince) / 100) / 10;
          this.logger.info({ kind: w.kind, seconds, objects: items.length }, `${w.kind} watch resumed`);
        } else if (!w.everSynced) {
          this.logger.info({ kind: w.kind, version: w.version, objects: items.length }, `${w.kind} cache synced`);
        }
        w.state = 'synced';
        w.everSynced = true;
        w.brokenSince = undefined;
        w.problem = undefined;
        w.failures = 0;
        w.lastEventAt = this.now();
      },
      upserted: (item) => {
        if (w.watch !== current) return;
        this.index.upsert(w.kind, item);
        w.lastEventAt = this.now();
      },
      deleted: (item) => {
        if (w.watch !== current || item.metadata.name === undefined) return;
        this.index.remove(w.kind, item.metadata.name);
        w.lastEventAt = this.now();
      },
      failed: (error) => {
        if (w.watch === current) this.onFailure(w, error);
      },
      alive: () => {
        if (w.watch === current) w.lastEventAt = this.now();
      },
    });
    w.watch = current;
    // A kind that is forbidden stays so (and is not logged again) until a list succeeds.
    if (!w.everSynced && w.state !== 'forbidden' && w.state !== 'not-served') w.state = 'syncing';
    current.start().catch((error: unknown) => {
      if (w.watch === current) this.onFailure(w, error);
    });
  }

  private onFailure(w: KindWatcher, error: unknown): void {
    if (this.stopped) return;
    const status = statusOf(error);
    const message = error instanceof Error ? error.message : JSON.stringify(error);
    w.failures += 1;
    w.problem = message.slice(0, BOUNDS.apiserverMessageChars);
    w.watch?.stop();
    w.watch = undefined;
    const delay = this.backoff(w.failures);
    if (status === 404) {
      // The resource went away (CRD deleted). Discovery may still list it for a while; until a list succeeds
      // again, decisions about this kind say it is not served rather than trust a cache of a deleted kind.
      if (w.state !== 'not-served')
        this.logger.info({ kind: w.kind }, `${w.kind} is no longer served (CRD deleted?); watching for its return`);
      w.state = 'not-served';
      this.index.setUnavailable(w.kind, `the cluster does not serve ${w.kind} (its CRD is not installed)`);
    } else if (status === 403) {
      if (w.state !== 'forbidden') {
        this.logger.error(
          { kind: w.kind },
          `forbidden to list ${CLASS_KIND_FACTS[w.kind].resource}: grant get, list and watch to the webhook's service account`,
        );
      }
      w.state = 'forbidden';
      this.index.setUnavailable(w.kind, `the webhook may not list ${CLASS_KIND_FACTS[w.kind].resource} (RBAC)`);
    } else {
      w.brokenSince ??= this.now();
      const stale = w.lastEventAt === undefined ? undefined : Math.round((this.now() - w.lastEventAt) / 1000);
      // Before the first sync there is no cache to serve: the kind keeps the server unready (notReadyReasons).
      this.logger.warn(
        { kind: w.kind, status, err: message, retryMs: delay, secondsSinceLastEvent: stale },
        w.everSynced
          ? `${w.kind} watch failed; serving the last good cache and restarting`
          : `${w.kind} list failed before its first sync; not ready until it succeeds, retrying`,
      );
      w.state = 'broken';
    }
    w.restarts += 1;
    clearTimeout(w.retry);
    w.retry = setTimeout(() => {
      // A 404 means the CRD went away: find out what is served before watching again.
      if (status === 404) void this.discover();
      else if (!this.stopped && w.watch === undefined) this.startWatch(w);
    }, delay).unref();
  }
}
