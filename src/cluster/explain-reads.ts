import type { KubeConfig } from '@kubernetes/client-node';
import { SNAPSHOT_API } from '../classes/class-kinds.js';
import {
  classFor,
  classSecret,
  csiDriverOf,
  sourceOf,
  type Found,
  type Obj,
  type ObjEvent,
  type SnapshotWorld,
} from '../explain/snapshot-causes.js';
import { BOUNDS } from '../limits/bounds.js';
import { statusOf } from './apiserver-error.js';
import { kubeRequest } from './kube-http.js';
import { listPages } from './list-snapshot-objects.js';

/**
 * What `explain` reads of a cluster for one VolumeSnapshot: the snapshot, its events, the classes, its claim and
 * volume, the content it is (or would be) bound to and that content's events, and the secret its class names.
 * Every call is a GET (the ClusterRole snapshot-webhook-audit grants them); a 404 is "missing", a 403 or any other
 * failure is "unknown" with its reason, so the cause engine says what it could not read instead of guessing.
 */
const SNAPSHOTS = `/apis/${SNAPSHOT_API.group}/v1`;

/** A GET as a Found: the object, missing (404), or why it could not be read. */
async function get<T>(kc: KubeConfig, path: string, what: string): Promise<Found<T>> {
  try {
    return { found: await kubeRequest<T>(kc, 'GET', path) };
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return { missing: true };
    if (status === 403) return { unknown: `forbidden to get ${what}` };
    return { unknown: error instanceof Error ? error.message : String(error) };
  }
}

/** The events about one object (by kind and name), oldest first, at most a page of them. */
async function eventsOf(kc: KubeConfig, kind: string, name: string, namespace: string | undefined): Promise<ObjEvent[]> {
  const query = new URLSearchParams({
    fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}`,
    limit: String(BOUNDS.pageSize),
  });
  const where = namespace === undefined ? '/api/v1/events' : `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
  const answer = await get<{ items?: ObjEvent[] }>(kc, `${where}?${query.toString()}`, `events of ${kind} ${name}`);
  const items = 'found' in answer ? (answer.found.items ?? []) : [];
  const at = (e: ObjEvent) => e.lastTimestamp ?? '';
  return [...items].sort((a, b) => at(a).localeCompare(at(b)));
}

/** Every VolumeSnapshotClass, a page at a time, or why they could not be listed. */
export async function readClasses(kc: KubeConfig): Promise<Found<readonly Obj[]>> {
  const target = { group: SNAPSHOT_API.group, version: 'v1', resource: 'volumesnapshotclasses', kind: 'VolumeSnapshotClass' };
  const classes: Obj[] = [];
  try {
    for await (const page of listPages(kc, target)) classes.push(...(page as Obj[]));
    return { found: classes };
  } catch (error) {
    return { unknown: statusOf(error) === 403 ? 'forbidden to list volumesnapshotclasses' : (error as Error).message };
  }
}

/** The name of the content a snapshot is bound to, or would be: the status's, the pre-provisioned one, the controller's. */
export function contentNameOf(snapshot: Obj): string {
  const bound = snapshot.status?.boundVolumeSnapshotContentName;
  if (typeof bound === 'string' && bound !== '') return bound;
  const { volumeSnapshotContentName } = sourceOf(snapshot);
  if (typeof volumeSnapshotContentName === 'string') return volumeSnapshotContentName;
  return `snapcontent-${snapshot.metadata?.uid ?? ''}`;
}

/** The claim a snapshot names and the volume it is bound to, as far as they exist. */
async function claimAndVolume(
  kc: KubeConfig,
  namespace: string,
  snapshot: Obj,
): Promise<Pick<SnapshotWorld, 'claim' | 'volume'>> {
  const name = sourceOf(snapshot).persistentVolumeClaimName;
  if (typeof name !== 'string') return {};
  const claim = await get<Obj>(
    kc,
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`,
    `PersistentVolumeClaim ${name}`,
  );
  const volumeName = 'found' in claim ? claim.found.spec?.volumeName : undefined;
  if (typeof volumeName !== 'string' || volumeName === '') return { claim };
  const volume = await get<Obj>(
    kc,
    `/api/v1/persistentvolumes/${encodeURIComponent(volumeName)}`,
    `PersistentVolume ${volumeName}`,
  );
  return { claim, volume };
}

/** The snapshotter secret of the class the snapshot uses, when it names one without templates. */
async function classSecretOf(
  kc: KubeConfig,
  namespace: string,
  snapshot: Obj,
  classes: Found<readonly Obj[]>,
  volume: Found<Obj> | undefined,
): Promise<Found<Obj> | undefined> {
  if (!('found' in classes)) return undefined;
  const className = snapshot.spec?.volumeSnapshotClassName;
  const driver = volume !== undefined && 'found' in volume ? csiDriverOf(volume.found) : undefined;
  const { klass } = classFor(classes.found, typeof className === 'string' ? className : undefined, driver);
  const ref = klass === undefined ? undefined : classSecret(klass, namespace);
  if (ref === undefined) return undefined;
  return get<Obj>(
    kc,
    `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}`,
    `Secret ${ref.namespace}/${ref.name}`,
  );
}

/** Everything one snapshot's readiness depends on, or `{ missing }` / `{ unknown }` for the snapshot itself. */
export async function readSnapshotWorld(
  kc: KubeConfig,
  namespace: string,
  name: string,
  { now = Date.now(), classes: known }: { readonly now?: number; readonly classes?: () => Promise<Found<readonly Obj[]>> } = {},
): Promise<Found<SnapshotWorld>> {
  const path = `${SNAPSHOTS}/namespaces/${encodeURIComponent(namespace)}/volumesnapshots/${encodeURIComponent(name)}`;
  const read = await get<Obj>(kc, path, `VolumeSnapshot ${namespace}/${name}`);
  if (!('found' in read)) return read;
  const snapshot = read.found;
  // The caller's (audit reads them once for every snapshot), else read now.
  const classes = await (known ?? (() => readClasses(kc)))();
  const { claim, volume } = await claimAndVolume(kc, namespace, snapshot);
  const contentName = contentNameOf(snapshot);
  const content = await get<Obj>(
    kc,
    `${SNAPSHOTS}/volumesnapshotcontents/${encodeURIComponent(contentName)}`,
    `VolumeSnapshotContent ${contentName}`,
  );
  const secret = await classSecretOf(kc, namespace, snapshot, classes, volume);
  const created = Date.parse(snapshot.metadata?.creationTimestamp ?? '');
  return {
    found: {
      snapshot,
      events: await eventsOf(kc, 'VolumeSnapshot', name, namespace),
      classes,
      ...(claim === undefined ? {} : { claim }),
      ...(volume === undefined ? {} : { volume }),
      content,
      contentEvents: 'found' in content ? await eventsOf(kc, 'VolumeSnapshotContent', contentName, undefined) : [],
      ...(secret === undefined ? {} : { secret }),
      ageSeconds: Number.isNaN(created) ? 0 : Math.max(0, (now - created) / 1000),
    },
  };
}
