import { ClassIndex } from '../classes/class-index.js';
import type { ClassSource } from '../classes/class-source.js';
import type { Logger } from '../log/logger.js';
import { clientNodeApi, eventSink, loadKubeConfig } from './client-node-api.js';
import { ClassWatchers, DEFAULT_TIMING } from './class-watchers.js';
import type { EventSink } from './denial-events.js';

export interface ClusterSourceOptions {
  readonly kubeconfig: string | undefined;
  readonly logger: Logger;
  readonly discoveryIntervalMs: number;
}

export interface ClusterClassSource extends ClassSource {
  readonly watchers: ClassWatchers;
}

/** What the server uses of a live cluster: the classes it watches and where denial events go. */
export interface ClusterConnection {
  readonly classes: ClusterClassSource;
  readonly events: EventSink;
}

/** Classes from a live cluster through client-node informers, and an event sink on the same kubeconfig. */
export function connectCluster(options: ClusterSourceOptions): ClusterConnection {
  const kc = loadKubeConfig(options.kubeconfig);
  const index = new ClassIndex();
  const watchers = new ClassWatchers(index, clientNodeApi(kc), options.logger, {
    ...DEFAULT_TIMING,
    rediscoverMs: options.discoveryIntervalMs,
  });
  const classes: ClusterClassSource = {
    index,
    mode: 'cluster',
    watchers,
    start: () => watchers.start(),
    stop: async () => watchers.stop(),
    notReadyReasons: () => watchers.notReadyReasons(),
    cacheStatus: watchers,
  };
  return { classes, events: eventSink(kc) };
}
