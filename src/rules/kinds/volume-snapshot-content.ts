import type { VolumeSnapshotContent } from '../../schemas/types.js';
import {
  exactlyOneOnCreate,
  field,
  immutable,
  immutableOnceBound,
  notEmptyString,
  refNameAndNamespaceSet,
  type Check,
} from '../checks.js';
import { deny } from '../finding.js';
import { isSet, render, sameValue } from '../values.js';

type Content = VolumeSnapshotContent;
const volumeHandle = field<Content>('Spec.Source.VolumeHandle', (c) => c.spec?.source?.volumeHandle);
const snapshotHandle = field<Content>('Spec.Source.SnapshotHandle', (c) => c.spec?.source?.snapshotHandle);
const className = field<Content>('Spec.VolumeSnapshotClassName', (c) => c.spec?.volumeSnapshotClassName);
const refName = field<Content>('Spec.VolumeSnapshotRef.Name', (c) => c.spec?.volumeSnapshotRef?.name);
const refNamespace = field<Content>('Spec.VolumeSnapshotRef.Namespace', (c) => c.spec?.volumeSnapshotRef?.namespace);
const refUid = field<Content>('Spec.VolumeSnapshotRef.UID', (c) => c.spec?.volumeSnapshotRef?.uid);
const volumeMode = field<Content>('Spec.SourceVolumeMode', (c) => c.spec?.sourceVolumeMode);

/**
 * spec.sourceVolumeMode may be set once (unset -> value) but not changed or removed afterwards. Upstream
 * dereferenced the old value unconditionally and crashed when it was unset; here unset is simply allowed.
 */
const volumeModeNotConverted: Check<Content> = ({ operation, object, oldObject, options }) => {
  if (operation !== 'UPDATE' || oldObject === undefined || !options.preventVolumeModeConversion) return undefined;
  const before = volumeMode.get(oldObject);
  const after = volumeMode.get(object);
  if (!isSet(before) || sameValue(before, after)) return undefined;
  return deny('field-immutable', `${volumeMode.label} is immutable but was changed from ${render(before)} to ${render(after)}`);
};

/** snapshot.storage.k8s.io VolumeSnapshotContent, v1 and v1beta1. */
export const volumeSnapshotContentChecks: readonly Check<Content>[] = [
  exactlyOneOnCreate([volumeHandle, snapshotHandle]),
  notEmptyString(volumeHandle),
  notEmptyString(snapshotHandle),
  refNameAndNamespaceSet('Spec.VolumeSnapshotRef', refName, refNamespace),
  notEmptyString(className),
  immutable(volumeHandle),
  immutable(snapshotHandle),
  volumeModeNotConverted,
  // KEP-1900: once bound (the ref carries a uid) the reference may not be pointed elsewhere.
  immutableOnceBound(refUid, [refName, refNamespace, refUid]),
];
