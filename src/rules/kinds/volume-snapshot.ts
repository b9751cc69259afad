import type { VolumeSnapshot } from '../../schemas/types.js';
import { exactlyOneOnCreate, field, immutable, notEmptyString, type Check } from '../checks.js';
import { classExistsWarning } from '../class-exists.js';

const pvcName = field<VolumeSnapshot>('Spec.Source.PersistentVolumeClaimName', (s) => s.spec?.source?.persistentVolumeClaimName);
const contentName = field<VolumeSnapshot>(
  'Spec.Source.VolumeSnapshotContentName',
  (s) => s.spec?.source?.volumeSnapshotContentName,
);
const className = field<VolumeSnapshot>('Spec.VolumeSnapshotClassName', (s) => s.spec?.volumeSnapshotClassName);

/**
 * A member of a dynamic group snapshot: the snapshot-controller (v8.6) creates it with a VolumeGroupSnapshot as its
 * controlling owner, and with `persistentVolumeClaimName: ""` when the volume has no PersistentVolume. It is bound to
 * a content the controller made from the group's snapshot handle, so it becomes ready without a claim.
 */
function isGroupMember(snapshot: VolumeSnapshot): boolean {
  const owners: unknown = snapshot.metadata.ownerReferences;
  return (
    Array.isArray(owners) &&
    owners.some((o: unknown) => {
      const owner = o as { apiVersion?: unknown; kind?: unknown; controller?: unknown } | null;
      return (
        owner?.controller === true &&
        owner.kind === 'VolumeGroupSnapshot' &&
        typeof owner.apiVersion === 'string' &&
        owner.apiVersion.startsWith('groupsnapshot.storage.k8s.io/')
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
