import type { SnapshotClass } from '../schemas/types.js';
import { isDefaultClass } from './default-annotation.js';
import { CLASS_KINDS, type ClassKind } from './class-kinds.js';
import type { ClassView, DefaultsAnswer } from './class-view.js';
import { CLAIM_WINDOW_MS, type CacheView, type ObservedClass } from './default-claims.js';

/**
 * How long a default this replica admitted counts before the watch shows it. The watch echo normally arrives
 * within milliseconds; if the object never appears (another webhook denied it, etcd failed) the reservation
 * lapses after this long. 15 s is well past a normal write and short enough that a failed create blocks
 * another default only briefly.
 */
export const RESERVATION_MS = 15_000;

type Entry = ObservedClass;

/** Told when the number of defaults of a driver changes (from, to): a double default is worth a log line. */
export type DefaultsChanged = (kind: ClassKind, driver: string, from: number, to: number) => void;

/** Deleted objects remembered for the claims (by uid, for CLAIM_WINDOW_MS); beyond it the oldest go first. */
const MAX_REMEMBERED_DELETES = 1_000;

interface Reservation {
  readonly driver: string;
  readonly until: number;
}

/** Reservations held at most (a flood of forged creates): past it the oldest go first. */
const MAX_RESERVATIONS = 10_000;

class KindIndex {
  readonly byName = new Map<string, Entry>();
  /** driver -> names of the classes that are a default for it. Decisions read only this. */
  readonly defaultsByDriver = new Map<string, Set<string>>();
  /** name -> a default admitted here and not yet seen by the watch, oldest first. */
  readonly reserved = new Map<string, Reservation>();
  /** driver -> names reserved for it: a decision reads one driver's, never all of them. */
  readonly reservedByDriver = new Map<string, Set<string>>();
  /** uid -> when the cache saw that object go (deleted, or replaced by another object of its name). */
  readonly deletedAt = new Map<string, number>();
  unavailable: string | undefined = 'the class cache has not synced yet';

  constructor(
    private readonly kind: ClassKind,
    private readonly changed: DefaultsChanged | undefined,
    private readonly now: () => number,
  ) {}

  private rememberDeleted(uid: string): void {
    const now = this.now();
    this.deletedAt.delete(uid);
    this.deletedAt.set(uid, now);
    // Oldest first (insertion order): drop what has aged past the window, and anything over the cap.
    for (const [old, at] of this.deletedAt) {
      if (now - at < CLAIM_WINDOW_MS && this.deletedAt.size <= MAX_REMEMBERED_DELETES) break;
      this.deletedAt.delete(old);
    }
  }

  reserve(name: string, driver: string, until: number, now: number): void {
    this.unreserve(name);
    this.reserved.set(name, { driver, until });
    const names = this.reservedByDriver.get(driver) ?? new Set<string>();
    names.add(name);
    this.reservedByDriver.set(driver, names);
    // Oldest first: drop the expired ones and whatever is past the bound (amortised O(1) per reservation).
    for (const [old, r] of this.reserved) {
      if (r.until > now && this.reserved.size <= MAX_RESERVATIONS) break;
      this.unreserve(old);
    }
  }

  unreserve(name: string): void {
    const r = this.reserved.get(name);
    if (r === undefined) return;
    this.reserved.delete(name);
    const names = this.reservedByDriver.get(r.driver);
    names?.delete(name);
    if (names?.size === 0) this.reservedByDriver.delete(r.driver);
  }

  /** Names reserved for a driver that are still live. */
  reservedFor(driver: string, now: number): string[] {
    const names = this.reservedByDriver.get(driver);
    if (names === undefined) return [];
    const live: string[] = [];
    for (const name of [...names]) {
      if ((this.reserved.get(name)?.until ?? 0) > now) live.push(name);
      else this.unreserve(name);
    }
    return live;
  }

  wasDeleted(uid: string): boolean {
    const at = this.deletedAt.get(uid);
    return at !== undefined && this.now() - at < CLAIM_WINDOW_MS;
  }

  private defaultsOf(driver: string): number {
    return this.defaultsByDriver.get(driver)?.size ?? 0;
  }

  put(name: string, entry: Entry | undefined): void {
    const before = this.byName.get(name);
    const touched = [before, entry].flatMap((e) => (e?.isDefault === true ? [e.driver] : []));
    const counts = new Map(touched.map((driver) => [driver, this.defaultsOf(driver)]));
    if (before !== undefined && before.uid !== '' && before.uid !== entry?.uid) this.rememberDeleted(before.uid);
    this.apply(name, before, entry);
    for (const [driver, from] of counts) {
      const to = this.defaultsOf(driver);
      if (to !== from) this.changed?.(this.kind, driver, from, to);
    }
  }

  private apply(name: string, before: Entry | undefined, entry: Entry | undefined): void {
    if (before?.isDefault === true) {
      const names = this.defaultsByDriver.get(before.driver);
      names?.delete(name);
      if (names?.size === 0) this.defaultsByDriver.delete(before.driver);
    }
    if (entry === undefined) {
      this.byName.delete(name);
    } else {
      this.byName.set(name, entry);
      if (entry.isDefault) {
        const names = this.defaultsByDriver.get(entry.driver) ?? new Set<string>();
        names.add(name);
        this.defaultsByDriver.set(entry.driver, names);
      }
    }
    // The watch shows the admitted default: from now on the index itself counts it.
    if (entry?.isDefault === true && this.reserved.get(name)?.driver === entry.driver) this.unreserve(name);
  }
}

/**
 * The classes of the cluster, indexed by driver so a default-class decision costs the same with 10 or
 * 10,000 classes. Filled by a static loader or by informers; read by the rules through ClassView.
 */
export class ClassIndex implements ClassView {
  private readonly kinds: ReadonlyMap<ClassKind, KindIndex>;

  constructor(
    private readonly now: () => number = Date.now,
    changed?: DefaultsChanged,
  ) {
    this.kinds = new Map(CLASS_KINDS.map((k) => [k, new KindIndex(k, changed, now)]));
  }

  /** An index that can answer for every kind, and knows of no classes (standalone, or offline checks). */
  static withNoClasses(): ClassIndex {
    const index = new ClassIndex();
    for (const kind of CLASS_KINDS) index.replaceAll(kind, []);
    return index;
  }

  private of(kind: ClassKind): KindIndex {
    return this.kinds.get(kind) as KindIndex;
  }

  upsert(kind: ClassKind, object: SnapshotClass): void {
    const name = object.metadata.name;
    if (name === undefined) return;
    this.of(kind).put(name, {
      driver: object.driver ?? '',
      isDefault: isDefaultClass(kind, object),
      uid: object.metadata.uid ?? '',
      resourceVersion: typeof object.metadata.resourceVersion === 'string' ? object.metadata.resourceVersion : '',
    });
  }

  /** What the default-class claims read of this cache (docs/cluster.md, "Agreement across replicas"). */
  cacheView(kind: ClassKind): CacheView {
    const index = this.of(kind);
    return { observed: (name) => index.byName.get(name), deleted: (uid) => index.wasDeleted(uid) };
  }

  /** Drivers with at least one default, and how many (the `default_classes` gauge). */
  defaultCounts(kind: ClassKind): ReadonlyMap<string, number> {
    return new Map([...this.of(kind).defaultsByDriver].map(([driver, names]) => [driver, names.size]));
  }

  remove(kind: ClassKind, name: string): void {
    this.of(kind).put(name, undefined);
  }

  /** Replaces everything known of a kind (a fresh list) and marks it able to answer. */
  replaceAll(kind: ClassKind, objects: readonly SnapshotClass[]): void {
    const index = this.of(kind);
    const fresh = new Set(objects.map((o) => o.metadata.name));
    for (const name of [...index.byName.keys()]) if (!fresh.has(name)) index.put(name, undefined);
    for (const object of objects) this.upsert(kind, object);
    index.unavailable = undefined;
  }

  /** The kind cannot be answered for (not synced, forbidden, CRD not served); decisions needing it deny. */
  setUnavailable(kind: ClassKind, reason: string | undefined): void {
    this.of(kind).unavailable = reason;
  }

  isAvailable(kind: ClassKind): boolean {
    return this.of(kind).unavailable === undefined;
  }

  count(kind: ClassKind): number {
    return this.of(kind).byName.size;
  }

  /** Counts a default this replica just admitted, until the watch reports it or RESERVATION_MS pass. */
  reserveDefault(kind: ClassKind, name: string, driver: string): void {
    const now = this.now();
    this.of(kind).reserve(name, driver, now + RESERVATION_MS, now);
  }

  defaultsFor(kind: ClassKind, driver: string): DefaultsAnswer {
    const index = this.of(kind);
    if (index.unavailable !== undefined) return { ok: false, reason: index.unavailable };
    const names = new Set([...(index.defaultsByDriver.get(driver) ?? []), ...index.reservedFor(driver, this.now())]);
    return { ok: true, names: [...names].sort() };
  }

  exists(kind: ClassKind, name: string): boolean | undefined {
    const index = this.of(kind);
    if (index.unavailable !== undefined) return undefined;
    return index.byName.has(name) || (index.reserved.get(name)?.until ?? 0) > this.now();
  }
}
