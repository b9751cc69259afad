import type { ClassView } from '../classes/class-view.js';
import { isDefaultClass } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import { describeErrors } from '../schemas/validators.js';
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
    `cannot decode the ${route.kind} in request.${where}: ${describeErrors(route.decode.errors)}`,
  );
}

function deprecation(route: Route): Finding {
  return warn('deprecated-version', `${route.group}/${route.version} ${route.kind} is deprecated; use ${route.group}/v1`);
}

/**
 * Applies the rules of docs/rules.md to one request. Pure: the answer depends only on the arguments (and the view).
 */
export function evaluate(request: RuleRequest, classes: ClassView, options: RuleOptions): Evaluation {
  const findings = evaluateFindings(request, classes, options);
  return { ...findings, write: classWrite(request, findings.route) };
}

function evaluateFindings(request: RuleRequest, classes: ClassView, options: RuleOptions): Omit<Evaluation, 'write'> {
  const { group, version, resource } = request.resource;
  const route = findRoute(group, version, resource);
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { route, findings: [] };
  if (route === undefined) {
    const what = `${resource}.${version}${group === '' ? '' : `.${group}`}`;
    return {
      route,
      findings: [
        warn(
          'unhandled-resource',
          `snapshot-webhook does not check ${what.slice(0, BOUNDS.unhandledResourceChars)}; allowed unchecked`,
        ),
      ],
    };
  }
  const operation: Operation = request.operation;
  const notes = route.deprecated === true ? [deprecation(route)] : [];
  const bad = decodeFailure(route, 'object', request.object);
  if (bad !== undefined) return { route, findings: [bad, ...notes] };
  if (operation === 'UPDATE') {
    const badOld = decodeFailure(route, 'oldObject', request.oldObject);
    if (badOld !== undefined) return { route, findings: [badOld, ...notes] };
  }
  const ctx: CheckContext<unknown> = {
    operation,
    object: request.object,
    oldObject: operation === 'UPDATE' ? request.oldObject : undefined,
    classes,
    options,
  };
  if (route.legacyRatchet === true && operation === 'UPDATE' && oldObjectFailsCreate(route, ctx)) {
    return { route, findings: notes };
  }
  return { route, findings: [...runChecks(route.checks, ctx), ...notes] };
}

/** Upstream's v1beta1 ratchet: an object that was already invalid may be updated freely. */
function oldObjectFailsCreate(route: Route, ctx: CheckContext<unknown>): boolean {
  const asCreate: CheckContext<unknown> = { ...ctx, operation: 'CREATE', object: ctx.oldObject, oldObject: undefined };
  return runChecks(route.checks, asCreate).some((f) => f.warning !== true);
}

/** The class this request writes, if it is a class write at all. */
function classWrite(request: RuleRequest, route: Route | undefined): AdmittedClass | undefined {
  const kind = route?.classKind;
  if (route === undefined || kind === undefined) return undefined;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  // Only an object that really is a class (warn mode may have let an undecodable one through).
  if (!route.decode(request.object)) return undefined;
  const object = request.object as SnapshotClass;
  // An old object that is not a class (denied, or let through by warn mode) made no default.
  const old =
    request.operation === 'UPDATE' && route.decode(request.oldObject) ? (request.oldObject as SnapshotClass) : undefined;
  const wasDefault = old !== undefined && isDefaultClass(kind, old) && old.driver === object.driver;
  return { kind, object, becomesDefault: isDefaultClass(kind, object) && !wasDefault };
}
