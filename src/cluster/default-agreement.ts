import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClassIndex } from '../classes/class-index.js';
import { CLASS_KIND_FACTS, type ClassKind } from '../classes/class-kinds.js';
import {
  CLAIM_WINDOW_MS,
  CLAIMS_ANNOTATION,
  decideClaim,
  driverKey,
  readClaims,
  writeClaims,
  type ClaimBook,
  type ClaimWanted,
} from '../classes/default-claims.js';
import type { Logger } from '../log/logger.js';
import type { AdmittedClass, ClaimAnswer, DefaultAgreement } from '../rules/default-claim.js';
import { statusOf } from './apiserver-error.js';
import type { Lease, LeaseStore } from './lease-store.js';

/**
 * The time a claim may take, from the request's arrival to the Lease written: well inside the webhook's 5 s
 * timeout, so the apiserver gets our answer rather than a timeout.
 */
export const CLAIM_BUDGET_MS = 3_000;
/** Reads and writes per claim when other replicas keep moving the Lease (a 409 each time). */
const MAX_ATTEMPTS = 5;
/** Default-class writes waiting on this replica; beyond it, 503 at once. */
const MAX_WAITING = 64;
/** The time shutdown gives releasing the Leases, all together: well inside the pod's grace period. */
const RELEASE_BUDGET_MS = 2_000;
/**
 * How often a claim whose Lease write may still land is looked for, to withdraw it, and how long each look may
 * take: a phantom claim is gone within about this long of the apiserver answering again.
 */
const WITHDRAW_EVERY_MS = 1_000;

/** A claim this replica wrote: the driver's key in the book, and the class and time it names. */
interface OwnClaim {
  readonly key: string;
  readonly class: string;
  readonly at: number;
}

export interface AgreementOptions {
  readonly store: LeaseStore;
  readonly index: ClassIndex;
  /** Whether the cache of a kind is synced and its watch healthy: a takeover trusts it. */
  readonly healthy: (kind: ClassKind) => boolean;
  readonly logger: Logger;
  /** Who writes, for people reading the Lease (the pod's name). */
  readonly identity?: string;
  readonly now?: () => number;
}

/** The promise, or a rejection once `ms` have passed (a hung connection must not hold the answer). */
async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the apiserver within ${Math.round(ms)} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Kubernetes MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

/**
 * One default per driver across replicas (docs/cluster.md, "Agreement across replicas"): before a class
 * becomes a default, its claim on the driver is written to the kind's Lease with an optimistic update. One
 * claim at a time per kind on this replica; the Lease's resourceVersion orders the replicas.
 */
export class LeaseDefaultAgreement implements DefaultAgreement {
  private readonly tails = new Map<ClassKind, Promise<void>>();
  private waiting = 0;
  /** The Leases this replica wrote (and so may be named as the holder of). */
  private readonly written = new Set<string>();
  private readonly identity: string;
  private readonly now: () => number;
  /** Claims answered 503 whose write may still land, each looked for until it could block no more. */
  private readonly withdrawals = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly options: AgreementOptions) {
    this.identity = options.identity ?? process.env.POD_NAME ?? hostname();
    this.now = options.now ?? Date.now;
  }

  /**
   * At shutdown: waits for the claims in flight, then releases each Lease that still names this replica as its
   * holder (holderIdentity and renewTime removed). The claims themselves stay: they are facts about classes just
   * admitted, which the other replicas must honour until the watch shows them, whoever wrote them.
   */
  async drain(): Promise<void> {
    await Promise.all(this.tails.values());
    this.stopping.abort();
    await Promise.all(this.withdrawals);
    const deadline = this.now() + RELEASE_BUDGET_MS;
    await Promise.all([...this.written].map((name) => this.release(name, deadline)));
  }

  private async release(name: string, deadline: number): Promise<void> {
    try {
      const left = Math.max(1, deadline - this.now());
      const { lease } = await withDeadline(this.options.store.read(name, left), left);
      if (lease?.spec?.holderIdentity !== this.identity) return;
      const { holderIdentity: _holder, renewTime: _renewed, ...spec } = lease.spec;
      const rest = Math.max(1, deadline - this.now());
      await withDeadline(this.options.store.write({ ...lease, spec }, rest), rest);
      this.options.logger.info({ lease: name }, 'default-class Lease released: it no longer names this replica; its claims stay');
    } catch (error) {
      // Another replica wrote it first (409: it is the holder now), or the apiserver is away: nothing to undo.
      this.options.logger.info({ lease: name, reason: this.problem('update', error) }, 'default-class Lease not released');
    }
  }

  async claim(write: AdmittedClass, dryRun: boolean): Promise<ClaimAnswer> {
    const answer = await this.claimQueued(write, dryRun);
    if (answer.outcome === 'unavailable')
      this.options.logger.warn({ kind: write.kind, reason: answer.reason }, 'default-class claim not recorded; denied with 503');
    return answer;
  }

  /** One claim at a time per kind on this replica, within the claim budget. */
  private async claimQueued(write: AdmittedClass, dryRun: boolean): Promise<ClaimAnswer> {
    const { kind } = write;
    const deadline = this.now() + CLAIM_BUDGET_MS;
    if (this.waiting >= MAX_WAITING) return unavailable(`${MAX_WAITING} default-class writes are already waiting`);
    this.waiting += 1;
    const previous = this.tails.get(kind) ?? Promise.resolve();
    let release = (): void => undefined;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(kind, tail);
    try {
      await previous;
      return await this.claimInTurn(write, dryRun, deadline);
    } finally {
      this.waiting -= 1;
      release();
      if (this.tails.get(kind) === tail) this.tails.delete(kind);
    }
  }

  private async claimInTurn(write: AdmittedClass, dryRun: boolean, deadline: number): Promise<ClaimAnswer> {
    const { kind } = write;
    const name = CLASS_KIND_FACTS[kind].claimLease;
    const wanted = claimOf(write);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      if (!this.options.healthy(kind)) return unavailable(`the ${kind} cache is not synced with a healthy watch`);
      const left = deadline - this.now();
      if (left <= 0) return unavailable(`no answer from the apiserver within ${CLAIM_BUDGET_MS} ms`);
      let lease: Lease | undefined;
      let now: number;
      try {
        ({ lease, now } = await withDeadline(this.options.store.read(name, left), left));
      } catch (error) {
        return unavailable(this.problem('get', error));
      }
      const book = readClaims(lease?.metadata.annotations?.[CLAIMS_ANNOTATION]);
      const answer = decideClaim(book, wanted, now, this.options.index.cacheView(kind));
      if (answer.outcome === 'held') {
        const replica = lease?.spec?.holderIdentity;
        const { by, appeared } = answer;
        return { outcome: 'held', by: by.class, since: by.at, now, appeared, ...(replica ? { replica } : {}) };
      }
      if (answer.outcome === 'full') return unavailable(`the Lease ${name} holds too many recent claims`);
      if (dryRun) return RECORDED;
      const ours = ownClaim(answer.book, wanted.driver, now);
      const written = await this.record(this.leaseWith(name, lease, answer.book, now), ours, lease === undefined, deadline);
      if (written !== 'conflict') return written;
    }
    return unavailable(`the Lease ${name} changed under ${MAX_ATTEMPTS} attempts in a row`);
  }

  /** Writes the Lease; a 409 (another replica wrote first, or created it) means read again and decide again. */
  private async record(lease: Lease, ours: OwnClaim, creating: boolean, deadline: number): Promise<ClaimAnswer | 'conflict'> {
    try {
      const rest = Math.max(1, deadline - this.now());
      await withDeadline(this.options.store.write(lease, rest), rest);
      this.written.add(lease.metadata.name);
      return RECORDED;
    } catch (error) {
      const status = statusOf(error);
      if (status === 409) return 'conflict';
      // No answer, or a server error: the write may still land (a stalled etcd or apiserver commits it later),
      // leaving a claim for a class we refused. Look for it until it could block no more, and withdraw it.
      if (status === undefined || status >= 500) this.withdrawLater(lease.metadata.name, ours);
      return unavailable(this.problem(creating ? 'create' : 'update', error));
    }
  }

  private withdrawLater(name: string, ours: OwnClaim): void {
    const run: Promise<void> = this.withdraw(name, ours, this.now() + CLAIM_WINDOW_MS).finally(() =>
      this.withdrawals.delete(run),
    );
    this.withdrawals.add(run);
  }

  /** Until `until` (this replica's clock) or shutdown: once the claim shows in the Lease, remove it. */
  private async withdraw(name: string, ours: OwnClaim, until: number): Promise<void> {
    const { store, logger } = this.options;
    while (this.now() < until && !this.stopping.signal.aborted) {
      try {
        await sleep(WITHDRAW_EVERY_MS, undefined, { signal: this.stopping.signal, ref: false });
        const { lease } = await withDeadline(store.read(name, WITHDRAW_EVERY_MS), WITHDRAW_EVERY_MS);
        const book = new Map(readClaims(lease?.metadata.annotations?.[CLAIMS_ANNOTATION]));
        const found = book.get(ours.key);
        if (lease === undefined || found?.class !== ours.class || found.at !== ours.at) continue;
        book.delete(ours.key);
        const annotations = { ...lease.metadata.annotations, [CLAIMS_ANNOTATION]: writeClaims(book) };
        await withDeadline(
          store.write({ ...lease, metadata: { ...lease.metadata, annotations } }, WITHDRAW_EVERY_MS),
          WITHDRAW_EVERY_MS,
        );
        logger.info(
          { lease: name, class: ours.class },
          'default-class claim withdrawn: its write landed after the request was refused',
        );
        return;
      } catch {
        // Shutdown, the apiserver still away, or a 409 (the Lease moved): look again while the claim could block.
      }
    }
  }

  private leaseWith(name: string, lease: Lease | undefined, book: ClaimBook, now: number): Lease {
    const base: Lease = lease ?? {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: this.options.store.namespace, labels: { 'app.kubernetes.io/name': 'snapshot-webhook' } },
    };
    return {
      ...base,
      metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, [CLAIMS_ANNOTATION]: writeClaims(book) } },
      spec: { ...base.spec, holderIdentity: this.identity, renewTime: microTime(now) },
    };
  }

  private problem(verb: string, error: unknown): string {
    const where = `leases in namespace ${this.options.store.namespace}`;
    if (statusOf(error) === 403) return `the webhook may not ${verb} ${where} (RBAC: grant get, create and update)`;
    return `cannot ${verb} ${where}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

const RECORDED: ClaimAnswer = { outcome: 'recorded' };

/** The claim for `driver` that the book about to be written holds: this replica's, made at `at`. */
function ownClaim(book: ClaimBook, driver: string, at: number): OwnClaim {
  const key = driverKey(driver);
  return { key, class: book.get(key)?.class ?? '', at };
}
const unavailable = (reason: string): ClaimAnswer => ({ outcome: 'unavailable', reason });

/** What the write claims: the driver, and the class as the request names it. */
function claimOf({ kind, object }: AdmittedClass): ClaimWanted {
  const { name, uid, resourceVersion } = object.metadata;
  return {
    kind,
    driver: object.driver ?? '',
    class: name ?? '',
    uid: uid ?? '',
    resourceVersion: typeof resourceVersion === 'string' ? resourceVersion : '',
  };
}
