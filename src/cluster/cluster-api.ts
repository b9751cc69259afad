import type { SnapshotClass } from '../schemas/types.js';

/** A class resource to watch: `/apis/<group>/<version>/<plural>`. */
export interface ClassResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export interface WatchHandlers {
  /** A full list (first sync, or a resync after the watch expired). */
  listed(items: readonly SnapshotClass[]): void;
  upserted(item: SnapshotClass): void;
  deleted(item: SnapshotClass): void;
  /** The watch stopped with this error; it does not restart by itself. */
  failed(error: unknown): void;
  /** A sign of life with nothing to change: a bookmark, a reconnect, a server-side timeout. */
  alive?(): void;
}

export interface ClassWatch {
  start(): Promise<void>;
  stop(): void;
}

/**
 * The little the class cache needs from a cluster. The real one is client-node (cluster/client-node-api.ts);
 * tests fill it in memory.
 */
export interface ClusterApi {
  /**
   * For each wanted group and resource (plural), the group's preferred version if that version serves the
   * resource (group -> version); groups or resources not served are absent.
   */
  servedGroups(wanted: readonly { readonly group: string; readonly plural: string }[]): Promise<ReadonlyMap<string, string>>;
  watchClasses(resource: ClassResource, handlers: WatchHandlers): ClassWatch;
  /** One small read (a list of at most one object) that must answer within `timeoutMs`: is the apiserver there? */
  probe(resource: ClassResource, timeoutMs: number): Promise<void>;
}
