import { GROUP_SNAPSHOT_API } from '../../classes/class-kinds.js';
import type { VolumeSnapshot } from '../../schemas/types.js';
import { exactlyOneOnCreate, field, immutable, notEmptyString, type Check } from '../checks.js';
import { classExistsWarning } from '../class-exists.js';

const pvcName = field<VolumeSnapshot>('Spec.Source.PersistentVolumeClaimName', (s) => s.spec?.source?.persistentVolumeClaimName);
const contentName = field<VolumeSnapshot>(
  'Spec.Source.VolumeSnapshotContentName',
  (s) => s.spec?.source?.volumeSnapshotContentName,
);
const className = field<VolumeSnapshot>('Spec.VolumeSnapshotClassName', (s) => s.spec?.volumeSnapshotClassName);

/** The finalizer the snapshot-controller puts on each member snapshot it creates for a group (`utils.VolumeSnapshotInGroupFinalizer`). */
const IN_GROUP_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshot-in-group-protection';

/** The owner's apiVersion: the group API version the controller reads (v8.2: v1beta1, v8.4: v1beta2, v8.6: v1). */
const GROUP_OWNER_VERSIONS: ReadonlySet<string> = new Set(
  (['v1beta1', 'v1beta2', 'v1'] as const).map((v) => `${GROUP_SNAPSHOT_API.group}/${v}`),
);

/** The member's name: `snapshot-` and the hex SHA-256 of the group's uid and the volume handle. */
const MEMBER_NAME = /^snapshot-[0-9a-f]{64}$/;

const nonEmpty = (value: unknown): boolean => typeof value === 'string' && value !== '';

/**
 * A member of a dynamic group snapshot, as the snapshot-controller v8.2.1 to v8.6.0 creates it
 * (`buildVolumeSnapshotSpecForGroupSnapshot`, pkg/common-controller/groupsnapshot_controller_helper.go): the name
 * `snapshot-<sha256>`, the finalizer above, and an owner reference to its VolumeGroupSnapshot of apiVersion, kind,
 * name and uid only (`BuildVolumeGroupSnapshotOwnerReference` in pkg/utils/vgs.go sets no `controller`). The
 * controller writes `persistentVolumeClaimName: ""` when the volume has no PersistentVolume, and binds the member to
 * a content it made from the group's snapshot handle, so it becomes ready without a claim.
 */
function isGroupMember(snapshot: VolumeSnapshot): boolean {
  const { name, finalizers, ownerReferences } = snapshot.metadata as {
    name?: unknown;
    finalizers?: unknown;
    ownerReferences?: unknown;
  };
  if (typeof name !== 'string' || !MEMBER_NAME.test(name)) return false;
  if (!Array.isArray(finalizers) || !finalizers.includes(IN_GROUP_FINALIZER)) return false;
  return (
    Array.isArray(ownerReferences) &&
    ownerReferences.some((o: unknown) => {
      const owner = o as { apiVersion?: unknown; kind?: unknown; name?: unknown; uid?: unknown } | null;
      return (
        owner?.kind === 'VolumeGroupSnapshot' &&
        typeof owner.apiVersion === 'string' &&
        GROUP_OWNER_VERSIONS.has(owner.apiVersion) &&
        nonEmpty(owner.name) &&
        nonEmpty(owner.uid)
      );
    })
  );
}

/** snapshot.storage.k8s.io VolumeSnapshot, v1 and v1beta1. */
export const volumeSnapshotChecks: readonly Check<VolumeSnapshot>[] = [
  exactlyOneOnCreate([pvcName, contentName]),
  notEmptyString(pvcName, isGroupMember),
  notEmptyString(contentName),
  notEmptyString(className),
  immutable(pvcName),
  immutable(contentName),
  classExistsWarning('VolumeSnapshotClass', className),
];
