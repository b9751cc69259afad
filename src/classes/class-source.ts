import type { EventSink } from '../cluster/denial-events.js';
import type { CacheStatus } from '../server/metrics.js';
import type { ClassIndex } from './class-index.js';

/** Where the class index gets its contents: manifests given at start, or a live cluster. */
export interface ClassSource {
  readonly index: ClassIndex;
  /** A short name for logs: `standalone`, `manifests`, `cluster`. */
  readonly mode: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Why decisions that need the classes cannot be trusted yet (empty when they can). */
  notReadyReasons(): readonly string[];
  /** Sync state for metrics; only a live cluster has one. */
  readonly cacheStatus?: CacheStatus;
  /** Where denial events go; only a live cluster has one. */
  readonly eventSink?: EventSink;
}

/** A fixed set of classes: always ready, nothing to start or stop. */
export function fixedClassSource(index: ClassIndex, mode: string): ClassSource {
  return {
    index,
    mode,
    start: async () => undefined,
    stop: async () => undefined,
    notReadyReasons: () => [],
  };
}
