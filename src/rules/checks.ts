import type { ClassView } from '../classes/class-view.js';
import { deny, type Finding } from './finding.js';
import { isSet, render, sameValue } from './values.js';

export type Operation = 'CREATE' | 'UPDATE';

export interface RuleOptions {
  /** Upstream's `--prevent-volume-mode-conversion`: spec.sourceVolumeMode of a content may not change. */
  readonly preventVolumeModeConversion: boolean;
}

/** Everything a rule may look at. Rules are pure: same context, same findings. */
export interface CheckContext<T> {
  readonly operation: Operation;
  readonly object: T;
  /** Present exactly when operation is UPDATE. */
  readonly oldObject: T | undefined;
  readonly classes: ClassView;
  readonly options: RuleOptions;
}

export type Check<T> = (ctx: CheckContext<T>) => Finding | readonly Finding[] | undefined;

/** A field of a kind, with the name the upstream messages use for it (`Spec.Source.VolumeHandle`). */
export interface Field<T> {
  readonly label: string;
  readonly get: (object: T) => unknown;
  /** Its values may hold credentials (a class's parameters): the user sees them, the log line does not. */
  readonly secret?: boolean;
}

export function field<T>(label: string, get: (object: T) => unknown, options: { secret?: boolean } = {}): Field<T> {
  return { label, get, ...options };
}

function joinLabels(labels: readonly string[]): string {
  return labels.length <= 2 ? labels.join(' and ') : `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}`;
}

/** CREATE: exactly one of the source fields is set. */
export function exactlyOneOnCreate<T>(fields: readonly Field<T>[]): Check<T> {
  return ({ operation, object }) => {
    if (operation !== 'CREATE') return undefined;
    const set = fields.filter((f) => isSet(f.get(object)));
    if (set.length === 1) return undefined;
    if (set.length === 0) {
      return deny('source-exactly-one', `one of ${joinLabels(fields.map((f) => f.label))} should be set`);
    }
    const shown = set.map((f) => `${f.label} = ${render(f.get(object))}`).join(' and ');
    return deny('source-exactly-one', `only one of ${shown} should be set`);
  };
}

/** Whether an UPDATE leaves every one of these fields as it was (ratcheting: then field checks are skipped). */
function untouched<T>(ctx: CheckContext<T>, fields: readonly Field<T>[]): boolean {
  const { oldObject, object } = ctx;
  return oldObject !== undefined && fields.every((f) => sameValue(f.get(oldObject), f.get(object)));
}

/**
 * CREATE, UPDATE (when changed): a set string field is not `""`, unless `allowed` says this object may carry it
 * (a member the snapshot-controller writes that way).
 */
export function notEmptyString<T>(f: Field<T>, allowed: (object: T) => boolean = () => false): Check<T> {
  return (ctx) => {
    if (f.get(ctx.object) !== '' || untouched(ctx, [f]) || allowed(ctx.object)) return undefined;
    return deny('field-not-empty', `${f.label} must not be the empty string`);
  };
}

/** UPDATE: the field keeps its value (absent and null are the same; anything else is a change). */
export function immutable<T>(f: Field<T>): Check<T> {
  return ({ operation, object, oldObject }) => {
    if (operation !== 'UPDATE' || oldObject === undefined) return undefined;
    const before = f.get(oldObject);
    const after = f.get(object);
    if (sameValue(before, after)) return undefined;
    const message = `${f.label} is immutable but was changed from ${render(before)} to ${render(after)}`;
    const logMessage = f.secret === true ? `${f.label} is immutable but was changed (values withheld from the log)` : undefined;
    return deny('field-immutable', message, logMessage === undefined ? {} : { logMessage });
  };
}

/**
 * UPDATE: "immutable once set", the CRDs' own wording: unset -> value is allowed (the snapshot-controller fills
 * such fields in when it binds); a value may not change nor be removed.
 */
export function immutableOnceSet<T>(f: Field<T>): Check<T> {
  const check = immutable(f);
  return (ctx) => (ctx.oldObject === undefined || !isSet(f.get(ctx.oldObject)) ? undefined : check(ctx));
}

/** UPDATE: the fields are immutable once `guard` is set on the old object (a bound reference). */
export function immutableOnceBound<T>(guard: Field<T>, fields: readonly Field<T>[]): Check<T> {
  const checks = fields.map(immutable);
  return (ctx) => {
    if (ctx.oldObject === undefined || !isSet(guard.get(ctx.oldObject))) return undefined;
    return firstFinding(checks, ctx);
  };
}

/** CREATE, UPDATE (when changed): a reference names both a name and a namespace. */
export function refNameAndNamespaceSet<T>(label: string, name: Field<T>, namespace: Field<T>): Check<T> {
  return (ctx) => {
    const n = name.get(ctx.object);
    const ns = namespace.get(ctx.object);
    const complete = typeof n === 'string' && n !== '' && typeof ns === 'string' && ns !== '';
    if (complete || untouched(ctx, [name, namespace])) return undefined;
    return deny('ref-name-namespace-set', `both ${label}.Name = ${render(n)} and ${label}.Namespace = ${render(ns)} must be set`);
  };
}

/** Runs checks in order and returns the first finding, for composite checks that stop at one problem. */
export function firstFinding<T>(checks: readonly Check<T>[], ctx: CheckContext<T>): Finding | undefined {
  for (const check of checks) {
    const result = check(ctx);
    const found = Array.isArray(result) ? result[0] : (result as Finding | undefined);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Runs every check and gathers all findings, in check order. */
export function runChecks<T>(checks: readonly Check<T>[], ctx: CheckContext<T>): Finding[] {
  const findings: Finding[] = [];
  for (const check of checks) {
    const result = check(ctx);
    if (result === undefined) continue;
    if (Array.isArray(result)) findings.push(...(result as readonly Finding[]));
    else findings.push(result as Finding);
  }
  return findings;
}
