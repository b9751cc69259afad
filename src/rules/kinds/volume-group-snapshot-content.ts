import type { VolumeGroupSnapshotContent } from '../../schemas/types.js';
import {
  exactlyOneOnCreate,
  field,
  immutable,
  immutableOnceSet,
  notEmptyString,
  refNameAndNamespaceSet,
  type Check,
  type Field,
} from '../checks.js';

type Content = VolumeGroupSnapshotContent;
const volumeHandles = field<Content>('Spec.Source.VolumeHandles', (c) => c.spec?.source?.volumeHandles);
const groupSnapshotHandles = field<Content>('Spec.Source.GroupSnapshotHandles', (c) => c.spec?.source?.groupSnapshotHandles);
// The first v1alpha1 (external-snapshotter v7) named the two sources differently.
const persistentVolumeNames = field<Content>('Spec.Source.PersistentVolumeNames', (c) => c.spec?.source?.persistentVolumeNames);
const groupHandle = field<Content>('Spec.Source.VolumeGroupSnapshotHandle', (c) => c.spec?.source?.volumeGroupSnapshotHandle);
const refName = field<Content>('Spec.VolumeGroupSnapshotRef.Name', (c) => c.spec?.volumeGroupSnapshotRef?.name);
const refNamespace = field<Content>('Spec.VolumeGroupSnapshotRef.Namespace', (c) => c.spec?.volumeGroupSnapshotRef?.namespace);
const refUid = field<Content>('Spec.VolumeGroupSnapshotRef.UID', (c) => c.spec?.volumeGroupSnapshotRef?.uid);
const driver = field<Content>('Spec.Driver', (c) => c.spec?.driver);
const className = field<Content>('Spec.VolumeGroupSnapshotClassName', (c) => c.spec?.volumeGroupSnapshotClassName);

function contentChecks(sources: readonly Field<Content>[], extra: readonly Check<Content>[]): readonly Check<Content>[] {
  return [
    exactlyOneOnCreate(sources),
    notEmptyString(groupHandle),
    refNameAndNamespaceSet('Spec.VolumeGroupSnapshotRef', refName, refNamespace),
    notEmptyString(className),
    ...sources.map(immutable),
    immutable(refName),
    immutable(refNamespace),
    ...extra,
  ];
}

/**
 * v1alpha1 was served with two different source layouts; the apiserver prunes the fields its CRD does not
 * know, so an object carries only one layout's names and checking all four is exact for both.
 */
export const v1alpha1GroupContentChecks = contentChecks(
  [volumeHandles, groupSnapshotHandles, persistentVolumeNames, groupHandle],
  [],
);

export const v1beta1GroupContentChecks = contentChecks([volumeHandles, groupSnapshotHandles], []);

/** From v1beta2 on the driver is immutable, and the class name and the reference's uid immutable once set. */
export const v1beta2GroupContentChecks = contentChecks(
  [volumeHandles, groupSnapshotHandles],
  [immutable(driver), immutableOnceSet(className), immutableOnceSet(refUid)],
);
