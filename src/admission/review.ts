import type { ClassKind, ClassView } from '../classes/class-view.js';
import type { RuleOptions } from '../rules/checks.js';
import { decide, type Decision, type ModeSettings } from '../rules/decide.js';
import { isDefaultClass } from '../rules/default-class.js';
import { evaluate, type Evaluation } from '../rules/evaluate.js';
import { deny } from '../rules/finding.js';
import type { AdmissionRequest, SnapshotClass } from '../schemas/types.js';
import { readEnvelope } from './envelope.js';
import { respond, type AdmissionReviewResponse } from './respond.js';

export interface ReviewDeps {
  readonly classes: ClassView;
  readonly options: RuleOptions;
  readonly modes: ModeSettings;
  /** Counts a default this replica admitted before the watch reports it (see ClassIndex.reserveDefault). */
  readonly reserveDefault?: (kind: ClassKind, name: string, driver: string) => void;
}

export interface ReviewOutcome {
  readonly request: AdmissionRequest;
  readonly evaluation: Evaluation;
  readonly decision: Decision;
  readonly body: AdmissionReviewResponse;
}

/**
 * One admission request, start to end, without HTTP: envelope, route, rules, decision, response. Shared by
 * the server and `snapshot-webhook review`. Throws only the coded envelope errors (HTTP 400).
 */
export function reviewAdmission(body: unknown, deps: ReviewDeps): ReviewOutcome {
  const review = readEnvelope(body);
  const request = review.request;
  const evaluation = safeEvaluate(request, deps);
  const decision = decide(evaluation.findings, deps.modes);
  if (decision.allowed && request.dryRun !== true) noteAdmittedDefault(request, evaluation, deps);
  return { request, evaluation, decision, body: respond(review.apiVersion, request.uid, decision) };
}

/**
 * A rule must never turn a readable request into a 500 or a crash; an unexpected error (a structure too deep
 * for the stack, a bug) denies this one request and says so.
 */
function safeEvaluate(request: AdmissionRequest, deps: ReviewDeps): Evaluation {
  try {
    return evaluate(request, deps.classes, deps.options);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { route: undefined, findings: [deny('object-undecodable', `cannot check this object: ${reason}`, 500)] };
  }
}

function noteAdmittedDefault(request: AdmissionRequest, evaluation: Evaluation, deps: ReviewDeps): void {
  const route = evaluation.route;
  const kind = route?.classKind;
  if (route === undefined || kind === undefined || deps.reserveDefault === undefined) return;
  // Only an object that really is a class (warn mode may have let an undecodable one through).
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
  if (!route.decode(request.object)) return;
  const object = request.object as SnapshotClass;
  if (!isDefaultClass(kind, object)) return;
  const old = request.oldObject as SnapshotClass | undefined;
  const driver = object.driver ?? '';
  if (request.operation === 'UPDATE' && old !== undefined && isDefaultClass(kind, old) && old.driver === object.driver) return;
  deps.reserveDefault(kind, object.metadata.name ?? '', driver);
}
