import type { ClassIndex } from './class-index.js';
import type { ClassKind } from './class-kinds.js';

/** The state of a live class cache, per kind: what metrics and readiness report. */
export interface CacheStatus {
  status(): readonly {
    kind: ClassKind;
    synced: boolean;
    objects: number;
    restarts: number;
    secondsSinceLastEvent: number | undefined;
  }[];
}

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
