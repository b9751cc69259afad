import { CLASS_KIND_FACTS } from '../classes/class-kinds.js';
import { shown } from '../rules/values.js';

/**
 * Why a VolumeSnapshot is not ready, from the objects it depends on as the cluster has them (explain-reads.ts
 * reads them; this is pure). The causes are the snapshot-controller's and the csi-snapshotter sidecar's own
 * steps, in their order: the source (a claim, bound, of a CSI volume; or a pre-provisioned content), the class
 * (named, or the one default for the volume's driver), the class's secret, then the content the controller makes
 * and the sidecar fills in. The first step that cannot go on is the cause.
 */

/** A Kubernetes object as read: only the fields this reads are typed. */
export interface Obj {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly creationTimestamp?: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly status?: Readonly<Record<string, unknown>>;
  readonly driver?: string;
  readonly parameters?: Readonly<Record<string, string>>;
}

/** An event about an object, as the controller or the sidecar recorded it. */
export interface ObjEvent {
  readonly type?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly count?: number;
  readonly source?: { readonly component?: string };
  readonly reportingController?: string;
  readonly lastTimestamp?: string;
}

/** What a lookup found: the object, none (404), or why it could not tell (403, an error). */
export type Found<T> = { readonly found: T } | { readonly missing: true } | { readonly unknown: string };

/** Everything a snapshot's readiness depends on, each read once. */
export interface SnapshotWorld {
  readonly snapshot: Obj;
  readonly events: readonly ObjEvent[];
  /** Every VolumeSnapshotClass, or why they could not be listed. */
  readonly classes: Found<readonly Obj[]>;
  /** The claim named by spec.source.persistentVolumeClaimName, and its volume; undefined for a pre-provisioned one. */
  readonly claim?: Found<Obj>;
  readonly volume?: Found<Obj>;
  /** The content the snapshot is bound to, or would be (status, else the pre-provisioned name, else `snapcontent-UID`). */
  readonly content: Found<Obj>;
  readonly contentEvents: readonly ObjEvent[];
  /** The class's snapshotter secret, when its parameters name one without templates. */
  readonly secret?: Found<Obj>;
  /** Seconds since the snapshot was created. */
  readonly ageSeconds: number;
}

/** Seconds after which a snapshot nobody acted on means no snapshot-controller is acting (its resync is 15 min, its first pass immediate). */
export const CONTROLLER_GRACE_SECONDS = 60;

export const SNAPSHOT_CAUSES = [
  'ready',
  'claim-not-found',
  'claim-not-bound',
  'volume-not-found',
  'volume-not-csi',
  'content-not-found',
  'class-not-found',
  'no-default-class',
  'two-default-classes',
  'class-driver-mismatch',
  'secret-not-found',
  'no-controller',
  'snapshot-error',
  'no-sidecar',
  'driver-error',
  'in-progress',
  'cannot-read',
] as const;
export type SnapshotCause = (typeof SNAPSHOT_CAUSES)[number];

/** One step of the chain followed: what it is, and what was found. */
export interface ChainLink {
  readonly step: string;
  readonly found: string;
}

export interface Explanation {
  readonly ready: boolean;
  readonly cause: SnapshotCause;
  /** One line: what blocks it now, and what to do. */
  readonly message: string;
  readonly chain: readonly ChainLink[];
}

const DEFAULT_ANNOTATION = CLASS_KIND_FACTS.VolumeSnapshotClass.defaultAnnotation;
const SECRET_NAME = 'csi.storage.k8s.io/snapshotter-secret-name';
const SECRET_NAMESPACE = 'csi.storage.k8s.io/snapshotter-secret-namespace';

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const nameOf = (o: Obj): string => shown(o.metadata?.name ?? '');
const errorOf = (status: Readonly<Record<string, unknown>> | undefined): string | undefined =>
  str((status?.error as { message?: unknown } | undefined)?.message);

/** The snapshotter secret a class names, as namespace/name; undefined when it names none or uses templates. */
export function classSecret(klass: Obj, snapshotNamespace: string): { namespace: string; name: string } | undefined {
  const name = klass.parameters?.[SECRET_NAME];
  const namespace = klass.parameters?.[SECRET_NAMESPACE];
  if (name === undefined || namespace === undefined) return undefined;
  const resolved = namespace.replaceAll('${volumesnapshot.namespace}', snapshotNamespace);
  if (`${name}${resolved}`.includes('${')) return undefined;
  return { namespace: resolved, name };
}

/** The class a snapshot uses: the named one, else the one default of its volume's driver; how many defaults there are. */
export function classFor(
  classes: readonly Obj[],
  className: string | undefined,
  driver: string | undefined,
): { klass: Obj | undefined; defaults: readonly Obj[] } {
  if (className !== undefined) return { klass: classes.find((c) => c.metadata?.name === className), defaults: [] };
  const defaults = classes.filter((c) => c.driver === driver && c.metadata?.annotations?.[DEFAULT_ANNOTATION] === 'true');
  return { klass: defaults.length === 1 ? defaults[0] : undefined, defaults };
}

/** The last warning among `events`, for the one line of a snapshot still in progress. */
function lastWarning(events: readonly ObjEvent[]): ObjEvent | undefined {
  return events.filter((e) => e.type === 'Warning').at(-1);
}

/** Who recorded an event: the controller or the sidecar, by the name it gives. */
const reporter = (e: ObjEvent): string => e.reportingController || e.source?.component || 'unknown';

const eventLine = (e: ObjEvent): string =>
  `${e.type ?? ''} ${e.reason ?? ''} from ${reporter(e)}` +
  `${(e.count ?? 1) > 1 ? ` (${e.count} times)` : ''}: ${shown(e.message ?? '')}`;

class Chain {
  readonly links: ChainLink[] = [];
  add(step: string, found: string): void {
    this.links.push({ step, found });
  }
  explain(cause: SnapshotCause, message: string): Explanation {
    return { ready: cause === 'ready', cause, message, chain: this.links };
  }
}

/** A step's verdict: the explanation when it is the cause, else what the next steps need. */
type Step<T> = { readonly done: Explanation } | { readonly next: T };

const spec = (o: Obj): Record<string, unknown> => (o.spec ?? {}) as Record<string, unknown>;
/** A snapshot's spec.source, or nothing. */
export const sourceOf = (o: Obj): Record<string, unknown> => (spec(o).source ?? {}) as Record<string, unknown>;
/** A PersistentVolume's CSI driver; undefined when it is not a CSI volume. */
export const csiDriverOf = (volume: Obj): string | undefined =>
  str((spec(volume).csi as { driver?: unknown } | undefined)?.driver);
const isOf = (value: unknown): string => String(value ?? '<unset>');

/** The claim: it exists, is Bound, and its volume exists and is CSI; the volume's driver. */
function claimStep(world: SnapshotWorld, chain: Chain, ns: string, claimName: string): Step<string> {
  const claim = world.claim ?? { unknown: 'not read' };
  if ('missing' in claim)
    return {
      done: chain.explain(
        'claim-not-found',
        `PersistentVolumeClaim ${shown(ns)}/${shown(claimName)} does not exist: create it, or name an existing claim in spec.source.persistentVolumeClaimName`,
      ),
    };
  if ('unknown' in claim)
    return { done: chain.explain('cannot-read', `cannot read PersistentVolumeClaim ${shown(claimName)}: ${claim.unknown}`) };
  const phase = str(claim.found.status?.phase) ?? '<unset>';
  const volumeName = str(spec(claim.found).volumeName);
  chain.add(
    'claim',
    `PersistentVolumeClaim ${shown(claimName)}, ${phase}${volumeName === undefined ? '' : `, volume ${shown(volumeName)}`}`,
  );
  if (phase !== 'Bound' || volumeName === undefined)
    return {
      done: chain.explain(
        'claim-not-bound',
        `PersistentVolumeClaim ${shown(claimName)} is ${phase}, not Bound: the snapshot waits until it is; see kubectl describe pvc -n ${shown(ns)} ${shown(claimName)}`,
      ),
    };
  return volumeStep(world, chain, claimName, volumeName);
}

function volumeStep(world: SnapshotWorld, chain: Chain, claimName: string, volumeName: string): Step<string> {
  const volume = world.volume ?? { unknown: 'not read' };
  if ('missing' in volume)
    return {
      done: chain.explain(
        'volume-not-found',
        `PersistentVolume ${shown(volumeName)} of claim ${shown(claimName)} does not exist`,
      ),
    };
  if ('unknown' in volume)
    return { done: chain.explain('cannot-read', `cannot read PersistentVolume ${shown(volumeName)}: ${volume.unknown}`) };
  const driver = csiDriverOf(volume.found);
  chain.add(
    'volume',
    `PersistentVolume ${shown(volumeName)}, ${driver === undefined ? 'not CSI' : `CSI driver ${shown(driver)}`}`,
  );
  if (driver === undefined)
    return {
      done: chain.explain(
        'volume-not-csi',
        `PersistentVolume ${shown(volumeName)} is not a CSI volume: only CSI volumes can be snapshot; move the data to a claim of a CSI driver`,
      ),
    };
  return { next: driver };
}

/** The class: the named one exists, else there is one default for the driver; it is of the volume's driver. */
function classStep(world: SnapshotWorld, chain: Chain, className: string | undefined, driver: string): Step<Obj> {
  if ('unknown' in world.classes)
    return { done: chain.explain('cannot-read', `cannot list VolumeSnapshotClasses: ${world.classes.unknown}`) };
  const { klass, defaults } = classFor('found' in world.classes ? world.classes.found : [], className, driver);
  if (className !== undefined && klass === undefined)
    return {
      done: chain.explain(
        'class-not-found',
        `VolumeSnapshotClass ${shown(className)} does not exist: create it, or name an existing class in spec.volumeSnapshotClassName`,
      ),
    };
  if (klass === undefined) return { done: noOneDefault(chain, driver, defaults) };
  chain.add(
    'class',
    `VolumeSnapshotClass ${nameOf(klass)}, driver ${shown(klass.driver ?? '')}${className === undefined ? ', the default' : ''}`,
  );
  if (klass.driver !== driver)
    return {
      done: chain.explain(
        'class-driver-mismatch',
        `VolumeSnapshotClass ${nameOf(klass)} is for driver ${shown(klass.driver ?? '')}, but the volume is of ${shown(driver)}: name a class of that driver`,
      ),
    };
  return { next: klass };
}

/** No class named, and not exactly one default for the driver. */
function noOneDefault(chain: Chain, driver: string, defaults: readonly Obj[]): Explanation {
  if (defaults.length === 0)
    return chain.explain(
      'no-default-class',
      `no class named and no default VolumeSnapshotClass for driver ${shown(driver)}: name a class in spec.volumeSnapshotClassName, or annotate one of that driver with ${DEFAULT_ANNOTATION}=true`,
    );
  return chain.explain(
    'two-default-classes',
    `no class named and ${defaults.length} default VolumeSnapshotClasses for driver ${shown(driver)} (${defaults.map(nameOf).join(', ')}): keep one; kubectl annotate volumesnapshotclass NAME ${DEFAULT_ANNOTATION}-`,
  );
}

/** The class's snapshotter secret exists, where it names one and it was read. */
function secretStep(world: SnapshotWorld, chain: Chain, klass: Obj, ns: string): Explanation | undefined {
  const secret = classSecret(klass, ns);
  if (secret === undefined || world.secret === undefined) return undefined;
  const where = `${shown(secret.namespace)}/${shown(secret.name)}`;
  if ('missing' in world.secret)
    return chain.explain(
      'secret-not-found',
      `Secret ${where}, which VolumeSnapshotClass ${nameOf(klass)} names for the snapshotter, does not exist: create it, or fix the class's ${SECRET_NAME} and ${SECRET_NAMESPACE}`,
    );
  chain.add('secret', `Secret ${where}: ${'found' in world.secret ? 'exists' : `not checked (${world.secret.unknown})`}`);
  return undefined;
}

/** No content yet: the controller's error, no controller at all, or not yet. */
function noContent(world: SnapshotWorld, chain: Chain): Explanation {
  const snapshotError = errorOf(world.snapshot.status);
  if (snapshotError !== undefined)
    return chain.explain('snapshot-error', `the snapshot-controller reports: ${shown(snapshotError)}`);
  const acted = world.snapshot.status !== undefined || world.events.some((e) => reporter(e).includes('snapshot-controller'));
  if (!acted && world.ageSeconds >= CONTROLLER_GRACE_SECONDS)
    return chain.explain(
      'no-controller',
      `no snapshot-controller has acted on it in ${Math.round(world.ageSeconds)} s: run one (kubectl get pods -A -l app.kubernetes.io/name=snapshot-controller), of a release that serves this API version`,
    );
  return chain.explain(
    'in-progress',
    'the snapshot-controller has not made its VolumeSnapshotContent yet: wait, then run explain again',
  );
}

/** The content the controller made (or the pre-provisioned one), as the sidecar left it. */
function contentStep(world: SnapshotWorld, chain: Chain): Explanation {
  if ('unknown' in world.content)
    return chain.explain('cannot-read', `cannot read the VolumeSnapshotContent: ${world.content.unknown}`);
  if ('missing' in world.content) return noContent(world, chain);
  const content = world.content.found;
  const driver = shown(str(spec(content).driver) ?? '');
  const status = content.status;
  chain.add(
    'content',
    `VolumeSnapshotContent ${nameOf(content)}, driver ${driver}, ${status === undefined ? 'no status' : `readyToUse ${isOf(status.readyToUse)}`}`,
  );
  for (const e of world.contentEvents.slice(-3)) chain.add('content event', eventLine(e));
  const driverError = errorOf(status);
  if (driverError !== undefined) return chain.explain('driver-error', `driver ${driver} reports: ${shown(driverError)}`);
  if (status === undefined)
    return chain.explain(
      'no-sidecar',
      `VolumeSnapshotContent ${nameOf(content)} has no status: no csi-snapshotter sidecar of driver ${driver} acts on it; check the driver's controller pod runs its csi-snapshotter container`,
    );
  const snapshotError = errorOf(world.snapshot.status);
  if (snapshotError !== undefined)
    return chain.explain('snapshot-error', `the snapshot-controller reports: ${shown(snapshotError)}`);
  const warning = lastWarning([...world.events, ...world.contentEvents]);
  return chain.explain(
    'in-progress',
    `the driver has not finished the snapshot yet${warning === undefined ? '' : `; last warning: ${shown(warning.message ?? '')}`}: wait, then run explain again`,
  );
}

/** The steps of a snapshot with a claim: the claim and volume, the class, its secret. */
function dynamicSteps(world: SnapshotWorld, chain: Chain, ns: string, claimName: string): Explanation | undefined {
  const claim = claimStep(world, chain, ns, claimName);
  if ('done' in claim) return claim.done;
  const klass = classStep(world, chain, str(spec(world.snapshot).volumeSnapshotClassName), claim.next);
  if ('done' in klass) return klass.done;
  return secretStep(world, chain, klass.next, ns);
}

/** Why `world.snapshot` is not ready now, or that it is. */
export function explainSnapshot(world: SnapshotWorld): Explanation {
  const { snapshot } = world;
  const chain = new Chain();
  const ns = snapshot.metadata?.namespace ?? '';
  const status = snapshot.status;
  chain.add('snapshot', `VolumeSnapshot ${shown(ns)}/${nameOf(snapshot)}, readyToUse ${isOf(status?.readyToUse)}`);
  for (const e of world.events.slice(-3)) chain.add('event', eventLine(e));
  if (status?.readyToUse === true) {
    const bound = shown(str(status.boundVolumeSnapshotContentName) ?? '');
    chain.add('content', `VolumeSnapshotContent ${bound}`);
    return chain.explain('ready', `ready to use (content ${bound}): nothing blocks it`);
  }
  const claimName = str(sourceOf(snapshot).persistentVolumeClaimName);
  const contentName = str(sourceOf(snapshot).volumeSnapshotContentName);
  if (claimName !== undefined) {
    const blocked = dynamicSteps(world, chain, ns, claimName);
    if (blocked !== undefined) return blocked;
  } else if (contentName !== undefined && 'missing' in world.content) {
    return chain.explain(
      'content-not-found',
      `VolumeSnapshotContent ${shown(contentName)} (spec.source.volumeSnapshotContentName) does not exist: create it with spec.volumeSnapshotRef ${shown(ns)}/${nameOf(snapshot)}`,
    );
  }
  return contentStep(world, chain);
}
