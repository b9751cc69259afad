import type { VolumeSnapshot } from '../../schemas/types.js';
import { exactlyOneOnCreate, field, immutable, notEmptyString, type Check } from '../checks.js';
import { classExistsWarning } from '../class-exists.js';

const pvcName = field<VolumeSnapshot>('Spec.Source.PersistentVolumeClaimName', (s) => s.spec?.source?.persistentVolumeClaimName);
const contentName = field<VolumeSnapshot>(
  'Spec.Source.VolumeSnapshotContentName',
  (s) => s.spec?.source?.volumeSnapshotContentName,
);
const className = field<VolumeSnapshot>('Spec.VolumeSnapshotClassName', (s) => s.spec?.volumeSnapshotClassName);

/** snapshot.storage.k8s.io VolumeSnapshot, v1 and v1beta1. */
export const volumeSnapshotChecks: readonly Check<VolumeSnapshot>[] = [
  exactlyOneOnCreate([pvcName, contentName]),
  notEmptyString(pvcName),
  notEmptyString(contentName),
  notEmptyString(className),
  immutable(pvcName),
  immutable(contentName),
  classExistsWarning('VolumeSnapshotClass', className),
];
