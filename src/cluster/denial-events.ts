import { hostname } from 'node:os';
import type { ReviewOutcome } from '../admission/review.js';
import type { Logger } from '../log/logger.js';
import { BOUNDS } from '../limits/bounds.js';

/** A Kubernetes core/v1 Event, the fields we set. */
export interface DenialEvent {
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: {
    apiVersion: string;
    kind: string;
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
  };
  readonly reason: string;
  readonly message: string;
  readonly type: 'Warning';
  readonly source: { readonly component: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
  readonly firstTimestamp: Date;
  readonly lastTimestamp: Date;
  readonly count: number;
}

export interface EventSink {
  create(event: DenialEvent): Promise<void>;
}

export interface EventLimits {
  /** Events waiting to be sent; more are dropped (counted, logged), never delaying an answer. */
  readonly queueMax: number;
  /** The same denial of the same object is recorded at most once per this long. */
  readonly perObjectMs: number;
}

/** 100 pending events is far more than a healthy cluster makes; one per object a minute keeps a retry loop quiet. */
export const DEFAULT_EVENT_LIMITS: EventLimits = { queueMax: 100, perObjectMs: 60_000 };

export type EventResult = 'sent' | 'failed' | 'dropped' | 'limited';

type DecidedObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
};

/** The Event for a denied, non-dry-run UPDATE of a named object; undefined for anything else. */
function eventFor(outcome: ReviewOutcome, now: number): DenialEvent | undefined {
  const { request, decision } = outcome;
  if (request.operation !== 'UPDATE' || decision.allowed || request.dryRun === true || decision.denial === undefined)
    return undefined;
  const object = request.object as DecidedObject;
  const meta = object.metadata ?? {};
  const name = meta.name ?? request.name;
  if (name === undefined) return undefined;
  const namespace = meta.namespace ?? request.namespace;
  const at = new Date(now);
  return {
    // Cluster-scoped objects get their events in `default`, as the kubelet does for Nodes.
    metadata: {
      name: `${name}.${now.toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`,
      namespace: namespace ?? 'default',
    },
    involvedObject: {
      apiVersion: object.apiVersion ?? `${request.kind.group}/${request.kind.version}`,
      kind: object.kind ?? request.kind.kind,
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(meta.uid === undefined ? {} : { uid: meta.uid }),
      ...(meta.resourceVersion === undefined ? {} : { resourceVersion: meta.resourceVersion }),
    },
    reason: 'FailedValidation',
    message: `update denied by snapshot-webhook: ${decision.denial.message}`.slice(0, BOUNDS.eventMessageChars),
    type: 'Warning',
    source: { component: 'snapshot-webhook' },
    reportingComponent: 'snapshot-webhook',
    reportingInstance: hostname(),
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}

/**
 * Records a Kubernetes Event on an existing object whose UPDATE was denied, so `kubectl describe` shows why
 * (the MicroShift design: "post errors to the problem object as Events"). Asynchronous: the admission answer
 * never waits for it; failures are only logged. Never for dry-run requests. A denied CREATE gets no Event:
 * the object does not exist, and the user already has the message as the API error.
 */
/** How long the shutdown waits for queued denial events. */
export const DRAIN_TIMEOUT_MS = 4_000;

export class DenialEvents {
  private readonly queue: DenialEvent[] = [];
  private readonly lastSent = new Map<string, number>();
  private sending: Promise<void> | undefined;

  constructor(
    private readonly sink: EventSink,
    private readonly logger: Logger,
    private readonly limits: EventLimits = DEFAULT_EVENT_LIMITS,
    private readonly count: (result: EventResult) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  record(outcome: ReviewOutcome): void {
    const event = eventFor(outcome, this.now());
    if (event === undefined) return;
    const key = `${outcome.request.resource.resource}/${event.metadata.namespace}/${event.involvedObject.name}/${event.message}`;
    const now = this.now();
    const last = this.lastSent.get(key);
    if (last !== undefined && now - last < this.limits.perObjectMs) {
      this.count('limited');
      return;
    }
    if (this.queue.length >= this.limits.queueMax) {
      this.count('dropped');
      this.logger.warn({ queued: this.queue.length }, 'denial event queue full; event dropped');
      return;
    }
    this.lastSent.set(key, now);
    this.forgetOld(now);
    this.queue.push(event);
    this.sending ??= this.send().finally(() => (this.sending = undefined));
  }

  /** The rate-limit memory stays small: entries older than the window are dropped. */
  private forgetOld(now: number): void {
    if (this.lastSent.size < 1000) return;
    for (const [key, at] of this.lastSent) if (now - at >= this.limits.perObjectMs) this.lastSent.delete(key);
  }

  /** Sends one event at a time until the queue is empty. Never throws. */
  private async send(): Promise<void> {
    for (let event = this.queue.shift(); event !== undefined; event = this.queue.shift()) {
      try {
        await this.sink.create(event);
        this.count('sent');
      } catch (error) {
        this.count('failed');
        this.logger.warn({ err: (error as Error).message, object: event.involvedObject.name }, 'could not record a denial event');
      }
    }
  }

  /**
   * Resolves when every queued event has been sent or has failed, or after `timeoutMs` (at shutdown: events are
   * worth a moment, not the grace period); what is left is dropped and said.
   */
  async drain(timeoutMs = DRAIN_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    const done = (async () => {
      while (this.sending !== undefined) await this.sending;
      return 'done' as const;
    })();
    const outcome = await Promise.race([done, late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      const left = this.queue.length + 1;
      this.queue.length = 0;
      this.logger.warn({ events: left }, 'denial events not sent before shutdown; dropped');
    }
  }

  pending(): number {
    return this.queue.length;
  }
}
