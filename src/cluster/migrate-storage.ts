import type { KubeConfig } from '@kubernetes/client-node';
import { GROUP_SNAPSHOT_API } from '../classes/class-kinds.js';
import { ApiserverError } from './apiserver-error.js';
import { kubeExchange } from './kube-http.js';
import { listPages } from './list-snapshot-objects.js';

/** The group snapshot CRDs, by plural, with their kinds: every object of each is rewritten at the storage version. */
const GROUP_SNAPSHOT_KINDS = {
  volumegroupsnapshots: 'VolumeGroupSnapshot',
  volumegroupsnapshotcontents: 'VolumeGroupSnapshotContent',
  volumegroupsnapshotclasses: 'VolumeGroupSnapshotClass',
} as const;
export const GROUP_SNAPSHOT_PLURALS = Object.keys(GROUP_SNAPSHOT_KINDS) as (keyof typeof GROUP_SNAPSHOT_KINDS)[];

interface Crd {
  spec: { versions: { name: string; storage: boolean }[] };
  status?: { storedVersions?: string[] };
}

/** What one CRD's migration did. */
export interface Migrated {
  readonly plural: string;
  readonly storage: string;
  readonly rewritten: number;
  readonly storedBefore: readonly string[];
}

/**
 * Moves every stored object of one group snapshot CRD to its storage version, then records that only that version
 * is stored (status.storedVersions), as Kubernetes' storage version migration does: each object gets an empty merge
 * patch, which the apiserver answers by reading it, converting it and writing it at the storage version; nothing in
 * it changes, so no value passes through this process (no integer is rounded by a JSON parser here). An object
 * deleted meanwhile is skipped. Any other failure stops before status.storedVersions is trimmed, so a failed run
 * leaves the CRD as it was and can be run again.
 */
export async function migrateStorage(kc: KubeConfig, plural: (typeof GROUP_SNAPSHOT_PLURALS)[number]): Promise<Migrated> {
  const group = GROUP_SNAPSHOT_API.group;
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${group}`;
  const crd = (await kubeExchange<Crd>(kc, 'GET', crdPath)).body;
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  if (storage === undefined) throw new Error(`${plural}.${group} has no storage version`);
  const storedBefore = crd.status?.storedVersions ?? [];
  let rewritten = 0;
  const target = { group, version: storage, resource: plural, kind: GROUP_SNAPSHOT_KINDS[plural] };
  for await (const page of listPages(kc, target))
    for (const item of page) {
      const metadata = item.metadata as { name: string; namespace?: string };
      if (await rewrite(kc, `/apis/${group}/${storage}`, plural, metadata)) rewritten += 1;
    }
  await kubeExchange(kc, 'PATCH', `${crdPath}/status`, { status: { storedVersions: [storage] } });
  return { plural, storage, rewritten, storedBefore };
}

/** The empty merge patch of one object; false when it was deleted since the list. */
async function rewrite(kc: KubeConfig, base: string, plural: string, at: { name: string; namespace?: string }): Promise<boolean> {
  const where = at.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(at.namespace)}`;
  try {
    await kubeExchange(kc, 'PATCH', `${base}${where}/${plural}/${encodeURIComponent(at.name)}`, {});
    return true;
  } catch (error) {
    if (error instanceof ApiserverError && error.status === 404) return false;
    throw error;
  }
}
