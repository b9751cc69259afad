import type { ClassResource, ClassWatch, ClusterApi, WatchHandlers } from '../../src/cluster/cluster-api.js';

export interface FakeWatch extends ClassWatch {
  readonly resource: ClassResource;
  readonly handlers: WatchHandlers;
  started: boolean;
  stopped: boolean;
}

/** An in-memory ClusterApi: the test decides what is served and drives each watch's events. */
export class FakeCluster implements ClusterApi {
  groups = new Map<string, string>([
    ['snapshot.storage.k8s.io', 'v1'],
    ['groupsnapshot.storage.k8s.io', 'v1beta1'],
  ]);
  discoveryError: Error | undefined;
  discoveries = 0;
  /** What a probe does: answer, fail, or never answer (a frozen apiserver). */
  probeError: Error | undefined;
  probes = 0;
  readonly watches: FakeWatch[] = [];

  async probe(): Promise<void> {
    this.probes += 1;
    if (this.probeError !== undefined) throw this.probeError;
  }

  async servedGroups(): Promise<ReadonlyMap<string, string>> {
    this.discoveries += 1;
    if (this.discoveryError !== undefined) throw this.discoveryError;
    return new Map(this.groups);
  }

  watchClasses(resource: ClassResource, handlers: WatchHandlers): ClassWatch {
    const watch: FakeWatch = {
      resource,
      handlers,
      started: false,
      stopped: false,
      start: async () => {
        watch.started = true;
      },
      stop: () => {
        watch.stopped = true;
      },
    };
    this.watches.push(watch);
    return watch;
  }

  /** The newest watch of a plural. */
  latest(plural: string): FakeWatch {
    const found = this.watches.filter((w) => w.resource.plural === plural).at(-1);
    if (found === undefined) throw new Error(`no watch of ${plural}`);
    return found;
  }
}

export const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
