/**
 * The two class kinds, and every fact about them that the rest of the code reads: one entry per kind, so a new
 * class kind or API version is one edit here (plus its rules and tests).
 */
export const CLASS_KINDS = ['VolumeSnapshotClass', 'VolumeGroupSnapshotClass'] as const;
export type ClassKind = (typeof CLASS_KINDS)[number];

export interface ClassKindFacts {
  readonly group: string;
  /** The versions of the group the webhook checks, in the order of the rules table (rules/table.ts). */
  readonly versions: readonly string[];
  /** The resource (plural) in URLs, RBAC and discovery. */
  readonly resource: string;
  /** The field that names the CSI driver: one default per value of it. */
  readonly driverField: 'driver';
  /** The annotation the snapshot-controller reads; only the exact value "true" makes a default. */
  readonly defaultAnnotation: string;
  /** How the default-class rule's denial begins (upstream's wording). */
  readonly denialPrefix: string;
  /** What a double default breaks: new ones of these that name no class fail. */
  readonly dependents: string;
  /** The Lease in the webhook's namespace where replicas record their claims on this kind's defaults. */
  readonly claimLease: string;
}

export const SNAPSHOT_API = { group: 'snapshot.storage.k8s.io', versions: ['v1', 'v1beta1'] } as const;
export const GROUP_SNAPSHOT_API = {
  group: 'groupsnapshot.storage.k8s.io',
  versions: ['v1alpha1', 'v1beta1', 'v1beta2', 'v1'],
} as const;

export const CLASS_KIND_FACTS: Readonly<Record<ClassKind, ClassKindFacts>> = {
  VolumeSnapshotClass: {
    ...SNAPSHOT_API,
    resource: 'volumesnapshotclasses',
    driverField: 'driver',
    defaultAnnotation: 'snapshot.storage.kubernetes.io/is-default-class',
    denialPrefix: 'default snapshot class',
    dependents: 'snapshots',
    claimLease: 'snapshot-webhook-default-volumesnapshotclass',
  },
  VolumeGroupSnapshotClass: {
    ...GROUP_SNAPSHOT_API,
    resource: 'volumegroupsnapshotclasses',
    driverField: 'driver',
    defaultAnnotation: 'groupsnapshot.storage.kubernetes.io/is-default-class',
    denialPrefix: 'default group snapshot class',
    dependents: 'group snapshots',
    claimLease: 'snapshot-webhook-default-volumegroupsnapshotclass',
  },
};

/**
 * The denial of a second default: upstream's words (`short`, which runbooks match on and warnings repeat), then
 * how to move the default, the one change the rule makes an admin do in two steps.
 */
export function secondDefaultMessage(kind: ClassKind, existing: string, driver: string): { message: string; short: string } {
  const { denialPrefix, resource, defaultAnnotation } = CLASS_KIND_FACTS[kind];
  const short = `${denialPrefix}: ${existing} already exists for driver: ${driver}`;
  const move = `to move the default, first remove it from ${existing}: kubectl annotate ${resource} ${existing} ${defaultAnnotation}-`;
  return { message: `${short}; ${move}`, short };
}
