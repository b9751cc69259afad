import type { ClassKind, ClassView } from '../classes/class-view.js';
import { isDefaultClass } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import type { RuleOptions } from './checks.js';
import { decide, type Decision, type ModeSettings } from './decide.js';
import { evaluate, type Evaluation, type RuleRequest } from './evaluate.js';
import { deny, type Finding } from './finding.js';

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
  /** Told of every allowed class write that is not a dry run (reviewRequest; the server calls it itself). */
  readonly admitted?: (admitted: AdmittedClass) => void;
}

export interface Verdict {
  readonly evaluation: Evaluation;
  readonly decision: Decision;
  /** The class this request writes, when the decision allows it (a dry run included). */
  readonly write?: AdmittedClass;
}

/** The rules' verdict on one request, without noting anything: the part the server and the CLI share. */
export function judgeRequest(request: RuleRequest, settings: ReviewSettings): Verdict {
  const evaluation = safeEvaluate(request, settings);
  const decision = decide(evaluation.findings, settings.modes);
  const write = decision.allowed ? classWrite(request, evaluation) : undefined;
  return write === undefined ? { evaluation, decision } : { evaluation, decision, write };
}

/** The verdict once one more finding is known (the cross-replica claim of a default). */
export function withFinding(verdict: Verdict, finding: Finding, modes: ModeSettings): Verdict {
  const evaluation = { ...verdict.evaluation, findings: [...verdict.evaluation.findings, finding] };
  const decision = decide(evaluation.findings, modes);
  return decision.allowed && verdict.write !== undefined
    ? { evaluation, decision, write: verdict.write }
    : { evaluation, decision };
}

/**
 * Review one request and note what it admitted: the road of the offline CLI (a manifest as a CREATE or
 * UPDATE). The server takes the same road with one asynchronous step between (admission/review.ts).
 */
export function reviewRequest(request: RuleRequest & { readonly dryRun?: boolean }, settings: ReviewSettings): Verdict {
  const verdict = judgeRequest(request, settings);
  if (verdict.decision.allowed && request.dryRun !== true && verdict.write !== undefined) settings.admitted?.(verdict.write);
  return verdict;
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

function classWrite(request: RuleRequest, evaluation: Evaluation): AdmittedClass | undefined {
  const kind = evaluation.route?.classKind;
  if (evaluation.route === undefined || kind === undefined) return undefined;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  // Only an object that really is a class (warn mode may have let an undecodable one through).
  if (!evaluation.route.decode(request.object)) return undefined;
  const object = request.object as SnapshotClass;
  const old = request.operation === 'UPDATE' ? (request.oldObject as SnapshotClass | undefined) : undefined;
  const wasDefault = old !== undefined && isDefaultClass(kind, old) && old.driver === object.driver;
  return { kind, object, becomesDefault: isDefaultClass(kind, object) && !wasDefault };
}
