import { GROUP_SNAPSHOT_API } from '../classes/class-kinds.js';
import { BOUNDS } from '../limits/bounds.js';
/**
 * CRD conversion for the group snapshot API (groupsnapshot.storage.k8s.io v1beta1, v1beta2, v1). Only
 * VolumeGroupSnapshotContent's status changed shape: v1beta1 lists `volumeSnapshotHandlePairList`
 * ({volumeHandle, snapshotHandle}), v1beta2 and v1 list `volumeSnapshotInfoList` (also creationTime, readyToUse,
 * restoreSize). Going down to v1beta1 keeps the full list in an annotation, so the way back loses nothing.
 */
export const GROUP = GROUP_SNAPSHOT_API.group;
export const CONVERSION_VERSIONS = ['v1beta1', 'v1beta2', 'v1'] as const;
export const CONVERSION_KINDS = ['VolumeGroupSnapshot', 'VolumeGroupSnapshotContent', 'VolumeGroupSnapshotClass'] as const;
export const INFO_LIST_ANNOTATION = 'groupsnapshot.storage.kubernetes.io/volume-snapshot-info-list';

type Version = (typeof CONVERSION_VERSIONS)[number];
type Json = Record<string, unknown>;
export type Converted = { readonly ok: true; readonly object: Json } | { readonly ok: false; readonly message: string };

export const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const versionOf = (apiVersion: unknown): Version | undefined =>
  typeof apiVersion === 'string' && apiVersion.startsWith(`${GROUP}/`)
    ? CONVERSION_VERSIONS.find((v) => `${GROUP}/${v}` === apiVersion)
    : undefined;

/** `kind name` for messages, bounded. */
export function describeObject(object: unknown): string {
  const kind = isRecord(object) && typeof object.kind === 'string' ? object.kind.slice(0, BOUNDS.kindChars) : 'object';
  const metadata = isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name.slice(0, BOUNDS.nameChars) : '(no name)';
  return `${kind} ${name}`;
}

/** The v1beta1 pairs of a list of entries: each entry's volumeHandle and snapshotHandle. */
const pairsOf = (entries: readonly unknown[]): Json[] =>
  entries.filter(isRecord).map(({ volumeHandle, snapshotHandle }) => ({ volumeHandle, snapshotHandle }));

/** v1beta2 info list -> v1beta1 pair list, with the info list kept whole in the annotation. */
function down(content: Json): Json {
  const status = content.status;
  if (!isRecord(status) || !('volumeSnapshotInfoList' in status)) return content;
  const { volumeSnapshotInfoList: infoList, ...rest } = status;
  // A null list is an absent one: nothing to keep.
  if (!Array.isArray(infoList)) return { ...content, status: rest };
  const metadata = isRecord(content.metadata) ? content.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  return {
    ...content,
    metadata: { ...metadata, annotations: { ...annotations, [INFO_LIST_ANNOTATION]: JSON.stringify(infoList) } },
    status: { ...rest, volumeSnapshotHandlePairList: pairsOf(infoList) },
  };
}

/** The annotation's entries, read by `reparse` (losslessly), or why they cannot be read. */
function annotatedList(value: string, reparse: (text: string) => unknown): { entries?: Json[]; problem?: string } {
  let parsed: unknown;
  try {
    parsed = reparse(value);
  } catch (error) {
    return {
      problem: `annotation ${INFO_LIST_ANNOTATION} is not JSON: ${(error as Error).message.slice(0, BOUNDS.parseErrorChars)}`,
    };
  }
  if (!Array.isArray(parsed) || !parsed.every(isRecord)) {
    return { problem: `annotation ${INFO_LIST_ANNOTATION} is not a list of entries` };
  }
  return { entries: parsed };
}

function samePairs(entries: readonly Json[], pairs: unknown): boolean {
  if (!Array.isArray(pairs) || pairs.length !== entries.length) return false;
  return entries.every((e, i) => {
    const pair: unknown = pairs[i];
    return isRecord(pair) && pair.volumeHandle === e.volumeHandle && pair.snapshotHandle === e.snapshotHandle;
  });
}

/** The content without the annotation; an annotations map it leaves empty goes too. */
function withoutAnnotation(content: Json): Json {
  const metadata = isRecord(content.metadata) ? content.metadata : {};
  const { annotations: all, ...bare } = metadata;
  const { [INFO_LIST_ANNOTATION]: used, ...others } = isRecord(all) ? all : {};
  return { ...content, metadata: Object.keys(others).length === 0 ? bare : { ...metadata, annotations: others } };
}

/**
 * v1beta1 pair list -> v1beta2 info list. The annotation's full list is used, and the annotation dropped, when it
 * matches the pairs or when there are no pairs (a status that only the annotation still holds, as upstream's
 * conversion restores it); pairs that an older client changed win over a stale annotation, which is then kept.
 */
function up(content: Json, reparse: (text: string) => unknown): Converted {
  const status = isRecord(content.status) ? content.status : undefined;
  const pairs = status?.volumeSnapshotHandlePairList;
  const restored = fromAnnotation(content, pairs, reparse);
  if ('problem' in restored) return { ok: false, message: restored.problem };
  const { entries, kept } = restored;
  if (entries === undefined && (status === undefined || !('volumeSnapshotHandlePairList' in status)))
    return { ok: true, object: kept };
  const { volumeSnapshotHandlePairList: unused, ...rest } = status ?? {};
  const infoList = entries ?? (Array.isArray(pairs) ? pairsOf(pairs) : pairs);
  return { ok: true, object: { ...kept, status: { ...rest, volumeSnapshotInfoList: infoList } } };
}

/** The annotation's entries and the content without it, when they apply (see `up`); else the content as it is. */
function fromAnnotation(
  content: Json,
  pairs: unknown,
  reparse: (text: string) => unknown,
): { entries?: Json[]; kept: Json } | { problem: string } {
  const metadata = isRecord(content.metadata) ? content.metadata : {};
  const annotation = isRecord(metadata.annotations) ? metadata.annotations[INFO_LIST_ANNOTATION] : undefined;
  if (typeof annotation !== 'string') return { kept: content };
  const { entries, problem } = annotatedList(annotation, reparse);
  if (entries === undefined) return { problem: problem ?? 'unreadable annotation' };
  if (pairs !== undefined && pairs !== null && !samePairs(entries, pairs)) return { kept: content };
  return { entries, kept: withoutAnnotation(content) };
}

/**
 * One object to `desiredAPIVersion`. `reparse` reads JSON text losslessly (the annotation holds int64s). Only
 * apiVersion changes between v1beta2 and v1, and for the two kinds whose schema is the same in every version.
 */
export function convertObject(object: unknown, desiredAPIVersion: string, reparse: (text: string) => unknown): Converted {
  const what = describeObject(object);
  if (!isRecord(object)) return { ok: false, message: 'an object to convert is not a JSON object' };
  const from = versionOf(object.apiVersion);
  const to = versionOf(desiredAPIVersion);
  if (from === undefined)
    return {
      ok: false,
      message: `${what}: cannot convert from apiVersion ${String(object.apiVersion).slice(0, BOUNDS.echoChars)}`,
    };
  if (to === undefined)
    return { ok: false, message: `${what}: cannot convert to apiVersion ${desiredAPIVersion.slice(0, BOUNDS.echoChars)}` };
  if (!CONVERSION_KINDS.some((k) => k === object.kind))
    return { ok: false, message: `${what}: kind ${String(object.kind).slice(0, BOUNDS.kindChars)} is not converted here` };
  const retyped = { ...object, apiVersion: desiredAPIVersion };
  if (object.kind !== 'VolumeGroupSnapshotContent' || (from === 'v1beta1') === (to === 'v1beta1'))
    return { ok: true, object: retyped };
  if (to === 'v1beta1') return { ok: true, object: down(retyped) };
  const converted = up(retyped, reparse);
  return converted.ok ? converted : { ok: false, message: `${what}: ${converted.message}` };
}
