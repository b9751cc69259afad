import type { SnapshotClass } from '../schemas/types.js';
import type { ClassKind } from './class-view.js';

/** The annotation the snapshot-controller reads; only the exact value "true" makes a default. */
export const DEFAULT_CLASS_ANNOTATION: Readonly<Record<ClassKind, string>> = {
  VolumeSnapshotClass: 'snapshot.storage.kubernetes.io/is-default-class',
  VolumeGroupSnapshotClass: 'groupsnapshot.storage.kubernetes.io/is-default-class',
};

/** The annotation's value when it is a string; an own property only (`__proto__` is a plain key here). */
export function annotationValue(kind: ClassKind, object: SnapshotClass): string | undefined {
  const annotations = object.metadata.annotations;
  if (annotations === undefined || annotations === null) return undefined;
  const key = DEFAULT_CLASS_ANNOTATION[kind];
  const value: unknown = Object.hasOwn(annotations, key) ? (annotations as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function isDefaultClass(kind: ClassKind, object: SnapshotClass): boolean {
  return annotationValue(kind, object) === 'true';
}
