import type { ClassView } from '../classes/class-view.js';
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
  const { route, findings, write } = safeEvaluate(request, settings);
  const { agreement } = settings;
  const claim =
    write?.becomesDefault === true && agreement !== undefined
      ? async () => claimFinding(write, await agreement.claim(write, dryRun))
      : undefined;
  const decision = await decide(findings, settings.modes, claim);
  if (decision.allowed && !dryRun && write !== undefined) settings.admitted?.(write);
  return { evaluation: { route, findings: decision.findings, write }, decision };
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
    return {
      route: undefined,
      findings: [deny('object-undecodable', `cannot check this object: ${reason}`, { code: 500 })],
      write: undefined,
    };
  }
}
