import type { ClassIndex } from '../classes/class-index.js';
import { CLASS_KIND_FACTS, CLASS_KINDS } from '../classes/class-kinds.js';
import { CLASS_DISCOVERY } from './class-watchers.js';
import { clientNodeApi, loadKubeConfig } from './client-node-api.js';
import { statusOf } from './apiserver-error.js';
import { kubeRequest } from './kube-http.js';
import type { SnapshotClass } from '../schemas/types.js';

/**
 * One list of each class kind the cluster serves, into the index (for `validate --kubeconfig`). A kind the
 * cluster does not serve counts as having no classes.
 */
export async function listClusterClasses(kubeconfig: string | undefined, index: ClassIndex): Promise<void> {
  const kc = loadKubeConfig(kubeconfig);
  const groups = await clientNodeApi(kc).servedGroups(CLASS_DISCOVERY);
  for (const kind of CLASS_KINDS) {
    const { group, resource: plural } = CLASS_KIND_FACTS[kind];
    const version = groups.get(group);
    if (version === undefined) continue;
    try {
      const list = await kubeRequest<{ items: SnapshotClass[] }>(kc, 'GET', `/apis/${group}/${version}/${plural}`);
      for (const item of list.items) index.upsert(kind, item);
    } catch (error) {
      if (statusOf(error) !== 404) throw new Error(`cannot list ${plural}: ${(error as Error).message}`, { cause: error });
    }
  }
}
