import type { ClassIndex } from '../classes/class-index.js';
import type { Decision } from '../rules/decide.js';
import type { Evaluation } from '../rules/evaluate.js';
import type { Finding } from '../rules/finding.js';
import { judgeRequest, withFinding, type AdmittedClass, type ReviewSettings } from '../rules/review-request.js';
import type { AdmissionRequest } from '../schemas/types.js';
import { readEnvelope } from './envelope.js';
import { respond, type AdmissionReviewResponse } from './respond.js';

/** Agreement with the other replicas that a class becomes its driver's default (cluster mode only). */
export interface DefaultAgreement {
  /** A finding when the class may not become the default now; dry runs read and never write. */
  claim(write: AdmittedClass, dryRun: boolean): Promise<Finding | undefined>;
}

export interface ReviewDeps extends ReviewSettings {
  readonly agreement?: DefaultAgreement;
}

export interface ReviewOutcome {
  readonly request: AdmissionRequest;
  readonly evaluation: Evaluation;
  readonly decision: Decision;
  readonly body: AdmissionReviewResponse;
}

/**
 * One AdmissionReview, start to end, without HTTP: envelope, rules, the claim of a new default across
 * replicas, decision, response. Shared by the server and `snapshot-webhook review`. Throws only the coded
 * envelope errors (HTTP 400).
 */
export async function reviewAdmission(body: unknown, deps: ReviewDeps): Promise<ReviewOutcome> {
  const review = readEnvelope(body);
  const request = review.request;
  const dryRun = request.dryRun === true;
  let verdict = judgeRequest(request, deps);
  if (verdict.write?.becomesDefault === true && deps.agreement !== undefined) {
    const refused = await deps.agreement.claim(verdict.write, dryRun);
    if (refused !== undefined) verdict = withFinding(verdict, refused, deps.modes);
  }
  if (verdict.decision.allowed && !dryRun && verdict.write !== undefined) deps.admitted?.(verdict.write);
  const { evaluation, decision } = verdict;
  return { request, evaluation, decision, body: respond(review.apiVersion, request.uid, decision) };
}

/** The server's `admitted`: a default admitted here counts at once, before the watch reports it. */
export function reserveAdmittedDefaults(index: ClassIndex): (admitted: AdmittedClass) => void {
  return ({ kind, object, becomesDefault }) => {
    if (becomesDefault) index.reserveDefault(kind, object.metadata.name ?? '', object.driver ?? '');
  };
}
