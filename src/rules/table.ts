import { CLASS_KIND_FACTS, GROUP_SNAPSHOT_API, SNAPSHOT_API, type ClassKind } from '../classes/class-kinds.js';
import { decoders, type Decoder } from '../schemas/validators.js';
import type { Check } from './checks.js';
import { classChecks } from './kinds/snapshot-class.js';
import {
  v1alpha1GroupContentChecks,
  v1beta1GroupContentChecks,
  v1beta2GroupContentChecks,
} from './kinds/volume-group-snapshot-content.js';
import { volumeGroupSnapshotChecks } from './kinds/volume-group-snapshot.js';
import { volumeSnapshotContentChecks } from './kinds/volume-snapshot-content.js';
import { volumeSnapshotChecks } from './kinds/volume-snapshot.js';

export const SNAPSHOT_GROUP = SNAPSHOT_API.group;
export const GROUP_SNAPSHOT_GROUP = GROUP_SNAPSHOT_API.group;

/** How one group/version/resource is checked. Adding an API version is one more entry below. */
export interface Route<T = unknown> {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly decode: Decoder<T>;
  readonly checks: readonly Check<T>[];
  /** For a class kind: which one, so the default-class bookkeeping knows what it admitted. */
  readonly classKind?: ClassKind;
  /** A deprecated version (snapshot.storage.k8s.io/v1beta1): answers carry a warning. */
  readonly deprecated?: boolean;
  /**
   * Upstream's wider v1beta1 ratchet for VolumeSnapshot and VolumeSnapshotContent: an UPDATE of an object
   * that already fails a CREATE check is allowed outright.
   */
  readonly legacyRatchet?: boolean;
}

function route<T>(entry: Route<T>): Route {
  return entry as unknown as Route;
}

function buildRoutes(): readonly Route[] {
  const d = decoders();
  const snapshotRoutes = SNAPSHOT_API.versions.flatMap((version) => {
    const deprecated = version === 'v1beta1';
    const base = { group: SNAPSHOT_GROUP, version, deprecated };
    return [
      route({
        ...base,
        resource: 'volumesnapshots',
        kind: 'VolumeSnapshot',
        decode: d.volumeSnapshot,
        checks: volumeSnapshotChecks,
        legacyRatchet: deprecated,
      }),
      route({
        ...base,
        resource: 'volumesnapshotcontents',
        kind: 'VolumeSnapshotContent',
        decode: d.volumeSnapshotContent,
        checks: volumeSnapshotContentChecks,
        legacyRatchet: deprecated,
      }),
      route({
        ...base,
        resource: CLASS_KIND_FACTS.VolumeSnapshotClass.resource,
        kind: 'VolumeSnapshotClass',
        classKind: 'VolumeSnapshotClass',
        decode: d.snapshotClass,
        checks: classChecks('VolumeSnapshotClass', false),
      }),
    ];
  });
  const groupContentChecks = {
    v1alpha1: v1alpha1GroupContentChecks,
    v1beta1: v1beta1GroupContentChecks,
    v1beta2: v1beta2GroupContentChecks,
    v1: v1beta2GroupContentChecks,
  } as const;
  const groupRoutes = GROUP_SNAPSHOT_API.versions.flatMap((version) => {
    const base = { group: GROUP_SNAPSHOT_GROUP, version };
    const settingsImmutable = version === 'v1beta2' || version === 'v1';
    return [
      route({
        ...base,
        resource: 'volumegroupsnapshots',
        kind: 'VolumeGroupSnapshot',
        decode: d.volumeGroupSnapshot,
        checks: volumeGroupSnapshotChecks,
      }),
      route({
        ...base,
        resource: 'volumegroupsnapshotcontents',
        kind: 'VolumeGroupSnapshotContent',
        decode: d.volumeGroupSnapshotContent,
        checks: groupContentChecks[version],
      }),
      route({
        ...base,
        resource: CLASS_KIND_FACTS.VolumeGroupSnapshotClass.resource,
        kind: 'VolumeGroupSnapshotClass',
        classKind: 'VolumeGroupSnapshotClass',
        decode: d.snapshotClass,
        checks: classChecks('VolumeGroupSnapshotClass', settingsImmutable),
      }),
    ];
  });
  return [...snapshotRoutes, ...groupRoutes];
}

let routes: ReadonlyMap<string, Route> | undefined;

const key = (group: string, version: string, resource: string): string => `${resource}.${version}.${group}`;

/** Every route, keyed `resource.version.group`; built once. */
export function allRoutes(): ReadonlyMap<string, Route> {
  routes ??= new Map(buildRoutes().map((r) => [key(r.group, r.version, r.resource), r]));
  return routes;
}

let byResource: ReadonlyMap<string, readonly Route[]> | undefined;

function groupByResource(routes: Iterable<Route>): ReadonlyMap<string, readonly Route[]> {
  const grouped = new Map<string, Route[]>();
  for (const r of routes) grouped.set(r.resource, [...(grouped.get(r.resource) ?? []), r]);
  return grouped;
}

/**
 * The route of a request's resource. Looked up by resource name, then compared field by field: joining the
 * three into a key for one Map lookup cost more per request than the rules of a simple object.
 */
export function findRoute(group: string, version: string, resource: string): Route | undefined {
  byResource ??= groupByResource(allRoutes().values());
  const candidates = byResource.get(resource);
  if (candidates === undefined) return undefined;
  for (const r of candidates) if (r.version === version && r.group === group) return r;
  return undefined;
}

/** The route of a kind by apiVersion and kind, for manifests (the offline CLI) rather than requests. */
export function findRouteByKind(apiVersion: string, kind: string): Route | undefined {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return undefined;
  const group = apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  for (const r of allRoutes().values()) {
    if (r.group === group && r.version === version && r.kind === kind) return r;
  }
  return undefined;
}
