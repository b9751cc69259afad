import type { ClassKind, ClassView } from '../classes/class-view.js';
import { isDefaultClass } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import type { RuleOptions } from './checks.js';
import { decide, type Decision, type ModeSettings } from './decide.js';
import { evaluate, type Evaluation, type RuleRequest } from './evaluate.js';
import { deny } from './finding.js';

/** A class write that was allowed: the caller's class view can count it before anyone else reports it. */
export interface AdmittedClass {
  readonly kind: ClassKind;
  readonly object: SnapshotClass;
  /** True when this write makes the class a default for its driver that it was not before. */
  readonly becomesDefault: boolean;
}

export interface ReviewSettings {
  readonly classes: ClassView;
  readonly options: RuleOptions;
  readonly modes: ModeSettings;
  /** Told of every allowed class write that is not a dry run. */
  readonly admitted?: (admitted: AdmittedClass) => void;
}

export interface Verdict {
  readonly evaluation: Evaluation;
  readonly decision: Decision;
}

/**
 * Review one request and note what it admitted: the one road of the server (an AdmissionReview) and of the
 * offline CLI (a manifest as a CREATE or UPDATE).
 */
export function reviewRequest(request: RuleRequest & { readonly dryRun?: boolean }, settings: ReviewSettings): Verdict {
  const evaluation = safeEvaluate(request, settings);
  const decision = decide(evaluation.findings, settings.modes);
  if (decision.allowed && request.dryRun !== true) noteAdmitted(request, evaluation, settings);
  return { evaluation, decision };
}

/**
 * A rule must never turn a readable request into a 500 or a crash; an unexpected error (a structure too deep
 * for the stack, a bug) denies this one request and says so.
 */
function safeEvaluate(request: RuleRequest, settings: ReviewSettings): Evaluation {
  try {
    return evaluate(request, settings.classes, settings.options);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { route: undefined, findings: [deny('object-undecodable', `cannot check this object: ${reason}`, { code: 500 })] };
  }
}

function noteAdmitted(request: RuleRequest, evaluation: Evaluation, settings: ReviewSettings): void {
  const kind = evaluation.route?.classKind;
  if (evaluation.route === undefined || kind === undefined || settings.admitted === undefined) return;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
  // Only an object that really is a class (warn mode may have let an undecodable one through).
  if (!evaluation.route.decode(request.object)) return;
  const object = request.object as SnapshotClass;
  const old = request.operation === 'UPDATE' ? (request.oldObject as SnapshotClass | undefined) : undefined;
  const wasDefault = old !== undefined && isDefaultClass(kind, old) && old.driver === object.driver;
  settings.admitted({ kind, object, becomesDefault: isDefaultClass(kind, object) && !wasDefault });
}
