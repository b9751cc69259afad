import type { ClassKind } from './class-kinds.js';

/**
 * The read-only view of the cluster's snapshot classes that the rules get. Someone else keeps it up to date:
 * the static loader (`--classes-from`) or the live informer cache. Rules never learn which.
 */

export type DefaultsAnswer =
  /** Names of the classes that are a default for the driver, sorted. */
  | { readonly ok: true; readonly names: readonly string[] }
  /** The view cannot answer (not synced yet, forbidden, CRD not served): the rule must deny, never guess. */
  | { readonly ok: false; readonly reason: string };

export interface ClassView {
  defaultsFor(kind: ClassKind, driver: string): DefaultsAnswer;
  /** Whether a class of that name exists; undefined when the view cannot tell. */
  exists(kind: ClassKind, name: string): boolean | undefined;
}
