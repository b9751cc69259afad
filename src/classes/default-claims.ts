import { createHash } from 'node:crypto';
import type { ClassKind } from './class-kinds.js';
import { BOUNDS } from '../limits/bounds.js';

/**
 * The claims the replicas agree on (docs/cluster.md, "Agreement across replicas"): for each driver, the class
 * that was last admitted as its default, with when and as which object. Kept in one Lease per class kind; this
 * file is the pure part: reading, deciding and writing the record. The I/O is in cluster/default-agreement.ts.
 */

/**
 * How long a claim blocks a new default by itself. An admitted write normally reaches storage and every
 * replica's watch within a second; if it never does (another webhook denied it, etcd failed), the claim stops
 * blocking after this long. It is also the longest a forged request can block a driver's default.
 */
export const CLAIM_WINDOW_MS = 15_000;

/** The Lease annotation that holds the claims, as JSON. */
export const CLAIMS_ANNOTATION = 'snapshot-webhook.storage.k8s.io/default-claims';

export interface Claim {
  /** The driver as written, cut to 63 characters (a CSI driver name's limit) for people reading the Lease. */
  readonly driver: string;
  readonly class: string;
  /** The object the claim was made for: its uid and the resourceVersion it was written over ('' for CREATE). */
  readonly uid: string;
  readonly resourceVersion: string;
  /** When the claim was made, in the apiserver's clock (ms since the epoch, from its Date header). */
  readonly at: number;
}

/** Claims by driver key (driverKey): one entry per driver, whatever its name's length. */
export type ClaimBook = ReadonlyMap<string, Claim>;

/** 128 bits of the hash: no two drivers of a cluster share a key. */
const DRIVER_KEY_HEX = 32;

/** The key of a driver in the book: a hash, so a driver name of any length costs the same few bytes. */
export function driverKey(driver: string): string {
  return createHash('sha256').update(driver).digest('hex').slice(0, DRIVER_KEY_HEX);
}

function isClaim(value: unknown): value is Claim {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.driver === 'string' &&
    typeof c.class === 'string' &&
    typeof c.uid === 'string' &&
    typeof c.resourceVersion === 'string' &&
    typeof c.at === 'number'
  );
}

/** The book in a Lease's annotation. Unreadable entries are dropped: the cache still answers for them. */
export function readClaims(annotation: string | undefined): Map<string, Claim> {
  const book = new Map<string, Claim>();
  if (annotation === undefined) return book;
  let parsed: unknown;
  try {
    parsed = JSON.parse(annotation);
  } catch {
    return book;
  }
  if (typeof parsed !== 'object' || parsed === null) return book;
  for (const [key, value] of Object.entries(parsed)) if (isClaim(value)) book.set(key, value);
  return book;
}

export function writeClaims(book: ClaimBook): string {
  return JSON.stringify(Object.fromEntries([...book].sort(([a], [b]) => a.localeCompare(b))));
}

/** What the cache knows of a class: the object it last saw. */
export interface ObservedClass {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly isDefault: boolean;
  readonly driver: string;
}

/** A default-class write that wants the driver's claim. */
export interface ClaimWanted {
  readonly kind: ClassKind;
  readonly driver: string;
  readonly class: string;
  readonly uid: string;
  readonly resourceVersion: string;
}

export type BookAnswer =
  /** The claim may be taken: write `book` (pruned, with the new claim) over the Lease. */
  | { readonly outcome: 'take'; readonly book: ClaimBook }
  /** Another class holds the driver; `appeared`: the local cache has seen that class at all. */
  | { readonly outcome: 'held'; readonly by: Claim; readonly appeared: boolean }
  /** Too many live claims: refuse rather than grow the Lease. */
  | { readonly outcome: 'full' };

/** What the local, synced cache knows: a class by name, and whether it saw an object deleted lately. */
export interface CacheView {
  observed(name: string): ObservedClass | undefined;
  /** The cache saw the object with this uid deleted within the window. */
  deleted(uid: string): boolean;
}

/**
 * Whether a claim held by another class still stands. A claim younger than the window stands until the cache
 * has seen its write land (the same object at a newer resourceVersion, or the object deleted): from then on
 * the cache answers. An older claim stands only while its class is a default of that driver in the cache.
 */
export function claimStands(claim: Claim, driver: string, now: number, cache: CacheView): boolean {
  const seen = cache.observed(claim.class);
  const isDefaultHere = seen !== undefined && seen.isDefault && seen.driver === driver;
  if (now - claim.at >= CLAIM_WINDOW_MS) return isDefaultHere;
  const landed =
    claim.uid !== '' && (cache.deleted(claim.uid) || (seen?.uid === claim.uid && seen.resourceVersion !== claim.resourceVersion));
  return landed ? isDefaultHere : true;
}

/**
 * Decide a wanted claim against the book read from the Lease. `now` is the apiserver's clock; `cache` is the
 * local, synced cache. Claims older than the window are pruned on every write: the cache answers for them.
 */
export function decideClaim(book: ClaimBook, wanted: ClaimWanted, now: number, cache: CacheView): BookAnswer {
  const key = driverKey(wanted.driver);
  const held = book.get(key);
  if (held !== undefined && held.class !== wanted.class && claimStands(held, wanted.driver, now, cache)) {
    return { outcome: 'held', by: held, appeared: cache.observed(held.class) !== undefined };
  }
  const live = new Map([...book].filter(([k, c]) => k !== key && now - c.at < CLAIM_WINDOW_MS && c.at <= now + CLAIM_WINDOW_MS));
  if (live.size >= BOUNDS.liveClaims) return { outcome: 'full' };
  live.set(key, {
    driver: wanted.driver.slice(0, BOUNDS.driverChars),
    class: wanted.class.slice(0, BOUNDS.nameChars),
    uid: wanted.uid.slice(0, BOUNDS.idChars),
    resourceVersion: wanted.resourceVersion.slice(0, BOUNDS.idChars),
    at: now,
  });
  return { outcome: 'take', book: live };
}
