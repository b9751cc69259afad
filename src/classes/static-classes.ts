import { readManifests } from '../manifests/read-manifests.js';
import type { SnapshotClass } from '../schemas/types.js';
import { decoders } from '../schemas/validators.js';
import { ClassIndex } from './class-index.js';
import { CLASS_KIND_FACTS, CLASS_KINDS, type ClassKind } from './class-kinds.js';

export function classKindOf(object: Record<string, unknown>): ClassKind | undefined {
  const kind = CLASS_KINDS.find((k) => k === object.kind);
  if (kind === undefined) return undefined;
  const apiVersion = object.apiVersion;
  return typeof apiVersion === 'string' && apiVersion.startsWith(`${CLASS_KIND_FACTS[kind].group}/`) ? kind : undefined;
}

/**
 * `--classes-from PATH`: the classes written in manifests stand for the cluster's, for running without one.
 * Throws when the files cannot be read, so a typo in the path stops the server at start.
 */
export function loadStaticClasses(path: string, index = new ClassIndex()): ClassIndex {
  const { objects, problems } = readManifests([path]);
  const first = problems[0];
  if (first !== undefined) throw new Error(`--classes-from ${path}: ${first.file}:${first.line}: ${first.message}`);
  const found = new Map<ClassKind, SnapshotClass[]>(CLASS_KINDS.map((k) => [k, []]));
  const decode = decoders().snapshotClass;
  for (const { object, file, line } of objects) {
    const kind = classKindOf(object);
    if (kind === undefined) continue;
    if (!decode(object)) throw new Error(`--classes-from ${path}: ${file}:${line}: not a valid ${kind}`);
    found.get(kind)?.push(object);
  }
  for (const [kind, list] of found) index.replaceAll(kind, list);
  return index;
}
