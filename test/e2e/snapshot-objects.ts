// Snapshot objects in the end-to-end cluster: typed targets, create/get/replace/delete through client-node, and
// the parts of a cluster the test plays by hand (a bound claim, the CSI sidecar releasing a content).
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from './processes.js';

export const NS = 'team-a';
export const DRIVER = 'hostpath.csi.k8s.io';
export const CONTROLLER_USER = 'snapshot-controller';
const SNAP = { group: 'snapshot.storage.k8s.io', version: 'v1' };
const GROUP = { group: 'groupsnapshot.storage.k8s.io', version: 'v1beta2' };
export interface Target {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}
export const VS: Target = { ...SNAP, plural: 'volumesnapshots', kind: 'VolumeSnapshot' };
export const VSC: Target = { ...SNAP, plural: 'volumesnapshotcontents', kind: 'VolumeSnapshotContent' };
export const VSCLASS: Target = { ...SNAP, plural: 'volumesnapshotclasses', kind: 'VolumeSnapshotClass' };
export const VGS: Target = { ...GROUP, plural: 'volumegroupsnapshots', kind: 'VolumeGroupSnapshot' };
export const VGSC: Target = { ...GROUP, plural: 'volumegroupsnapshotcontents', kind: 'VolumeGroupSnapshotContent' };
export const VGSCLASS: Target = { ...GROUP, plural: 'volumegroupsnapshotclasses', kind: 'VolumeGroupSnapshotClass' };
/** The path parameters of client-node's custom object calls. */
const at = ({ group, version, plural }: Target) => ({ group, version, plural });
export type Obj = {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string }[];
  };
  spec?: Record<string, unknown> & { source?: Record<string, unknown> };
  status?: Record<string, unknown>;
} & Record<string, unknown>;

/** The object with its apiVersion and kind, which the apiserver requires of a custom object. */
const typed = (target: Target, body: Obj): Obj => ({
  apiVersion: `${target.group}/${target.version}`,
  kind: target.kind,
  ...body,
});

/** The API's message in a client-node error. */
export function messageOf(error: unknown): string {
  const e = error as { body?: unknown; message?: string };
  const body = typeof e.body === 'string' ? (JSON.parse(e.body) as { message?: string }) : (e.body as { message?: string });
  return body?.message ?? e.message ?? String(error);
}

/**
 * A refused write as an Error that says what was written and the HTTP status. client-node's ApiException carries
 * the status as a numeric `code`, which tap does not take for an error: a failed write in a test would read only
 * "unhandled error". The body stays, so messageOf still reads the API's message.
 */
async function named<T>(what: string, call: Promise<T>): Promise<T> {
  return call.catch((error: unknown) => {
    const e = error as { code?: unknown; body?: unknown };
    const status = typeof e.code === 'number' ? `HTTP ${e.code}: ` : '';
    throw Object.assign(new Error(`${what}: ${status}${messageOf(error)}`, { cause: error }), { body: e.body });
  });
}

/** `(admitted)`, or the apiserver's message when the write was refused. */
export async function rejection(action: Promise<unknown>): Promise<string> {
  return action.then(
    () => '(admitted)',
    (error: unknown) => messageOf(error),
  );
}

export const klass = (target: Target, name: string, driver: string, isDefault: boolean, deletionPolicy = 'Delete'): Obj => {
  const annotation =
    target === VSCLASS
      ? 'snapshot.storage.kubernetes.io/is-default-class'
      : 'groupsnapshot.storage.kubernetes.io/is-default-class';
  return {
    apiVersion: `${target.group}/${target.version}`,
    kind: target === VSCLASS ? 'VolumeSnapshotClass' : 'VolumeGroupSnapshotClass',
    metadata: { name, ...(isDefault ? { annotations: { [annotation]: 'true' } } : {}) },
    driver,
    deletionPolicy,
  };
};

/** The snapshot objects of the test namespace and the cluster, through one admin (or any) kubeconfig. */
export function snapshotObjects(kc: KubeConfig) {
  const api = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const clusterScoped = (target: Target): boolean => !['volumesnapshots', 'volumegroupsnapshots'].includes(target.plural);
  const get = async (target: Target, name: string): Promise<Obj> =>
    (clusterScoped(target)
      ? await api.getClusterCustomObject({ ...at(target), name })
      : await api.getNamespacedCustomObject({ ...at(target), namespace: NS, name })) as Obj;
  const create = async (target: Target, body: Obj): Promise<Obj> =>
    (await named(
      `create ${target.kind} ${body.metadata.name}`,
      clusterScoped(target)
        ? api.createClusterCustomObject({ ...at(target), body: typed(target, body) })
        : api.createNamespacedCustomObject({ ...at(target), namespace: NS, body: typed(target, body) }),
    )) as Obj;
  const replace = async (target: Target, body: Obj): Promise<Obj> =>
    (await named(
      `replace ${target.kind} ${body.metadata.name}`,
      clusterScoped(target)
        ? api.replaceClusterCustomObject({ ...at(target), name: body.metadata.name, body })
        : api.replaceNamespacedCustomObject({ ...at(target), namespace: NS, name: body.metadata.name, body }),
    )) as Obj;
  const remove = async (target: Target, name: string): Promise<void> => {
    await named(
      `delete ${target.kind} ${name}`,
      clusterScoped(target)
        ? api.deleteClusterCustomObject({ ...at(target), name })
        : api.deleteNamespacedCustomObject({ ...at(target), namespace: NS, name }),
    );
  };
  const list = async (target: Target): Promise<Obj[]> =>
    (
      (clusterScoped(target)
        ? await api.listClusterCustomObject(at(target))
        : await api.listNamespacedCustomObject({ ...at(target), namespace: NS })) as { items: Obj[] }
    ).items;
  const gone = async (target: Target, name: string): Promise<boolean> =>
    get(target, name).then(
      () => false,
      (error: { code?: number }) => error.code === 404,
    );

  /** A PersistentVolume of the CSI driver and a claim bound to it, as kubelet and the PV controller would leave them. */
  async function boundClaim(name: string, driver: string, labels: Record<string, string> = {}): Promise<void> {
    const pv = `pv-${name}`;
    await core.createPersistentVolume({
      body: {
        metadata: { name: pv },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          csi: { driver, volumeHandle: `vol-${name}` },
          claimRef: { namespace: NS, name },
        },
      },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name, labels },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          volumeName: pv,
          storageClassName: '',
        },
      },
    });
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: NS, name });
    claim.status = { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] };
    await core.replaceNamespacedPersistentVolumeClaimStatus({ namespace: NS, name, body: claim });
  }

  /** Plays the CSI sidecar after a delete: it would delete the backend snapshot, then drop the content's finalizers. */
  async function sidecarReleases(target: Target, name: string): Promise<void> {
    await waitFor(
      `${name} released`,
      async () => {
        const content = await get(target, name).catch(() => undefined);
        if (content === undefined) return true;
        if (content.metadata.deletionTimestamp === undefined) return false;
        content.metadata.finalizers = [];
        await replace(target, content);
        return true;
      },
      30_000,
      250,
    );
  }
  /**
   * Plays the CSI sidecar once the driver made a group snapshot: the group content's status, through the status
   * subresource, one entry per volume handle, at the version of `target` (the v8.6 sidecar writes v1). The group's
   * creationTime is a date-time; each member's is int64 ns.
   */
  async function sidecarReportsGroup(
    contentName: string,
    groupHandle: string,
    volumeHandles: readonly string[],
    target: Target = VGSC,
  ): Promise<void> {
    const content = await get(target, contentName);
    const creationTime = Date.now() * 1_000_000;
    content.status = {
      volumeGroupSnapshotHandle: groupHandle,
      creationTime: new Date().toISOString(),
      readyToUse: true,
      volumeSnapshotInfoList: volumeHandles.map((volumeHandle) => ({
        volumeHandle,
        snapshotHandle: `snap-handle-${volumeHandle}`,
        creationTime,
        readyToUse: true,
        restoreSize: 1073741824,
      })),
    };
    await api.replaceClusterCustomObjectStatus({ ...at(target), name: contentName, body: content });
  }
  return { api, core, get, create, replace, remove, list, gone, boundClaim, sidecarReleases, sidecarReportsGroup };
}
