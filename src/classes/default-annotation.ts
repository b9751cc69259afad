import type { SnapshotClass } from '../schemas/types.js';
import { CLASS_KIND_FACTS, type ClassKind } from './class-kinds.js';

/** The annotation's value when it is a string; an own property only (`__proto__` is a plain key here). */
export function annotationValue(kind: ClassKind, object: SnapshotClass): string | undefined {
  const annotations = object.metadata.annotations;
  if (annotations === undefined || annotations === null) return undefined;
  const key = CLASS_KIND_FACTS[kind].defaultAnnotation;
  const value: unknown = Object.hasOwn(annotations, key) ? (annotations as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function isDefaultClass(kind: ClassKind, object: SnapshotClass): boolean {
  return annotationValue(kind, object) === 'true';
}

/**
 * An UPDATE of a class that was already a default for the same driver (docs/rules.md, "The default-class rule",
 * step 2): it makes no new default. `oldObject` is undefined for a CREATE.
 */
export function wasAlreadyDefault(kind: ClassKind, object: SnapshotClass, oldObject: SnapshotClass | undefined): boolean {
  return oldObject !== undefined && isDefaultClass(kind, oldObject) && oldObject.driver === object.driver;
}
