import type { ClassView } from '../classes/class-view.js';
import { isDefaultClass } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import type { RuleOptions } from './checks.js';
import { decide, type Decision, type ModeSettings } from './decide.js';
import { claimFinding, type AdmittedClass, type DefaultAgreement } from './default-claim.js';
import { evaluate, type Evaluation, type RuleRequest } from './evaluate.js';
import { deny } from './finding.js';

export interface ReviewSettings {
  readonly classes: ClassView;
  readonly options: RuleOptions;
  readonly modes: ModeSettings;
  /** Agreement across replicas on a new default (cluster mode); asked only when the rules allow the write. */
  readonly agreement?: DefaultAgreement;
  /** Told of every allowed class write that is not a dry run, so the class view counts it at once. */
  readonly admitted?: (admitted: AdmittedClass) => void;
}

export interface Verdict {
  /** The route, and every finding: the rules' and the claim's. */
  readonly evaluation: Evaluation;
  readonly decision: Decision;
}

/**
 * Decides one request, once: the rules, the claim of a new default when the rules allow it, the decision, and
 * the note of what was admitted. The server (behind the AdmissionReview envelope) and the offline CLI (a
 * manifest as a CREATE or UPDATE) both call this.
 */
export async function decideRequest(
  request: RuleRequest & { readonly dryRun?: boolean },
  settings: ReviewSettings,
): Promise<Verdict> {
  const dryRun = request.dryRun === true;
  const { route, findings } = safeEvaluate(request, settings);
  const write = classWrite(request, route);
  const { agreement } = settings;
  const claim =
    write?.becomesDefault === true && agreement !== undefined
      ? async () => claimFinding(write, await agreement.claim(write, dryRun))
      : undefined;
  const decision = await decide(findings, settings.modes, claim);
  if (decision.allowed && !dryRun && write !== undefined) settings.admitted?.(write);
  return { evaluation: { route, findings: decision.findings }, decision };
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

/** The class this request writes, if it is a class write at all. */
function classWrite(request: RuleRequest, route: Evaluation['route']): AdmittedClass | undefined {
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
