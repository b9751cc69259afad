import { ClassIndex } from '../classes/class-index.js';
import type { ClassSource } from '../classes/class-source.js';
import type { Logger } from '../log/logger.js';
import { clientNodeApi, eventSink, loadKubeConfig } from './client-node-api.js';
import { ClassWatchers, DEFAULT_TIMING } from './class-watchers.js';

export interface ClusterSourceOptions {
  readonly kubeconfig: string | undefined;
  readonly logger: Logger;
  readonly discoveryIntervalMs: number;
}

export interface ClusterClassSource extends ClassSource {
  readonly watchers: ClassWatchers;
}

/** Classes from a live cluster through client-node informers. */
export function clusterClassSource(options: ClusterSourceOptions): ClusterClassSource {
  const kc = loadKubeConfig(options.kubeconfig);
  const index = new ClassIndex();
  const watchers = new ClassWatchers(index, clientNodeApi(kc), options.logger, {
    ...DEFAULT_TIMING,
    rediscoverMs: options.discoveryIntervalMs,
  });
  return {
    index,
    mode: 'cluster',
    watchers,
    start: () => watchers.start(),
    stop: async () => watchers.stop(),
    notReadyReasons: () => watchers.notReadyReasons(),
    cacheStatus: watchers,
    eventSink: eventSink(kc),
  };
}
