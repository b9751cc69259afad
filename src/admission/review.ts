import type { ClassIndex } from '../classes/class-index.js';
import type { Decision } from '../rules/decide.js';
import type { Evaluation } from '../rules/evaluate.js';
import { reviewRequest, type AdmittedClass, type ReviewSettings } from '../rules/review-request.js';
import type { AdmissionRequest } from '../schemas/types.js';
import { readEnvelope } from './envelope.js';
import { respond, type AdmissionReviewResponse } from './respond.js';

export type ReviewDeps = ReviewSettings;

export interface ReviewOutcome {
  readonly request: AdmissionRequest;
  readonly evaluation: Evaluation;
  readonly decision: Decision;
  readonly body: AdmissionReviewResponse;
}

/**
 * One AdmissionReview, start to end, without HTTP: envelope, rules and decision, response. Shared by the
 * server and `snapshot-webhook review`. Throws only the coded envelope errors (HTTP 400).
 */
export function reviewAdmission(body: unknown, deps: ReviewDeps): ReviewOutcome {
  const review = readEnvelope(body);
  const request = review.request;
  const { evaluation, decision } = reviewRequest(request, deps);
  return { request, evaluation, decision, body: respond(review.apiVersion, request.uid, decision) };
}

/** The server's `admitted`: a default admitted here counts at once, before the watch reports it. */
export function reserveAdmittedDefaults(index: ClassIndex): (admitted: AdmittedClass) => void {
  return ({ kind, object, becomesDefault }) => {
    if (becomesDefault) index.reserveDefault(kind, object.metadata.name ?? '', object.driver ?? '');
  };
}
