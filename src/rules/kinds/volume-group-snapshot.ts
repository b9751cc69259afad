import type { VolumeGroupSnapshot } from '../../schemas/types.js';
import { exactlyOneOnCreate, field, immutable, notEmptyString, type Check } from '../checks.js';
import { classExistsWarning } from '../class-exists.js';

type Group = VolumeGroupSnapshot;
const selector = field<Group>('Spec.Source.Selector', (g) => g.spec?.source?.selector);
const contentName = field<Group>(
  'Spec.Source.VolumeGroupSnapshotContentName',
  (g) => g.spec?.source?.volumeGroupSnapshotContentName,
);
const className = field<Group>('Spec.VolumeGroupSnapshotClassName', (g) => g.spec?.volumeGroupSnapshotClassName);

/** groupsnapshot.storage.k8s.io VolumeGroupSnapshot: the same fields in every served version. */
export const volumeGroupSnapshotChecks: readonly Check<Group>[] = [
  exactlyOneOnCreate([selector, contentName]),
  notEmptyString(contentName),
  notEmptyString(className),
  immutable(selector),
  immutable(contentName),
  classExistsWarning('VolumeGroupSnapshotClass', className),
];
