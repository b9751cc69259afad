import type { ClassView } from '../classes/class-view.js';
import { isDefaultClass, wasAlreadyDefault } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import { describeObjectErrors } from '../schemas/validators.js';
import { runChecks, type CheckContext, type Operation, type RuleOptions } from './checks.js';
import type { AdmittedClass } from './default-claim.js';
import { deny, warn, type Finding } from './finding.js';
import { findRoute, type Route } from './table.js';
import { BOUNDS } from '../limits/bounds.js';

/** The parts of an admission request the rules read; also built by the offline CLI from manifests. */
export interface RuleRequest {
  readonly operation: string;
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly object?: unknown;
  readonly oldObject?: unknown;
}

export interface Evaluation {
  /** Undefined when the resource is not one this webhook handles. */
  readonly route: Route | undefined;
  /** Every finding, denials and warnings, in rule order. */
  readonly findings: readonly Finding[];
  /** The class this request writes, when it writes one (whether or not it is allowed). */
  readonly write: AdmittedClass | undefined;
}

function decodeFailure(route: Route, where: 'object' | 'oldObject', value: unknown): Finding | undefined {
  if (value === undefined || value === null) {
    return deny('object-undecodable', `request.${where} is missing: a ${route.kind} is required to check this request`);
  }
  if (route.decode(value)) return undefined;
  return deny(
    'object-undecodable',
    `cannot decode the ${route.kind} in request.${where}: ${describeObjectErrors(route.decode.errors, value)}`,
  );
}

function deprecation(route: Route): Finding {
  return warn('deprecated-version', `${route.group}/${route.version} ${route.kind} is deprecated; use ${route.group}/v1`);
}

/**
 * Applies the rules of docs/rules.md to one request. Pure: the answer depends only on the arguments (and the view).
 */
export function evaluate(request: RuleRequest, classes: ClassView, options: RuleOptions): Evaluation {
  const { group, version, resource } = request.resource;
  const route = findRoute(group, version, resource);
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { route, findings: [], write: undefined };
  if (route === undefined) {
    const what = `${resource}.${version}${group === '' ? '' : `.${group}`}`;
    const text = `snapshot-webhook does not check ${what.slice(0, BOUNDS.unhandledResourceChars)}; allowed unchecked`;
    return { route, findings: [warn('unhandled-resource', text)], write: undefined };
  }
  const operation: Operation = request.operation;
  const notes = route.deprecated === true ? [deprecation(route)] : [];
  const bad = decodeFailure(route, 'object', request.object);
  if (bad !== undefined) return { route, findings: [bad, ...notes], write: undefined };
  if (operation === 'UPDATE') {
    const badOld = decodeFailure(route, 'oldObject', request.oldObject);
    // An old object that is not a class (let through by warn mode) made no default.
    if (badOld !== undefined) return { route, findings: [badOld, ...notes], write: classWrite(route, request.object, undefined) };
  }
  const oldObject = operation === 'UPDATE' ? request.oldObject : undefined;
  const write = classWrite(route, request.object, oldObject);
  const ctx: CheckContext<unknown> = { operation, object: request.object, oldObject, classes, options };
  if (route.legacyRatchet === true && operation === 'UPDATE' && oldObjectFailsCreate(route, ctx)) {
    return { route, findings: notes, write };
  }
  return { route, findings: [...runChecks(route.checks, ctx), ...notes], write };
}

/** The class a request writes, once its objects are known to decode: whether it becomes its driver's default. */
function classWrite(route: Route, object: unknown, oldObject: unknown): AdmittedClass | undefined {
  const kind = route.classKind;
  if (kind === undefined) return undefined;
  const written = object as SnapshotClass;
  const old = oldObject as SnapshotClass | undefined;
  return { kind, object: written, becomesDefault: isDefaultClass(kind, written) && !wasAlreadyDefault(kind, written, old) };
}

/** Upstream's v1beta1 ratchet: an object that was already invalid may be updated freely. */
function oldObjectFailsCreate(route: Route, ctx: CheckContext<unknown>): boolean {
  const asCreate: CheckContext<unknown> = { ...ctx, operation: 'CREATE', object: ctx.oldObject, oldObject: undefined };
  return runChecks(route.checks, asCreate).some((f) => f.warning !== true);
}
