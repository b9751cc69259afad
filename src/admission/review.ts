import type { ClassIndex } from '../classes/class-index.js';
import { decideRequest, type ReviewSettings } from '../rules/decide-request.js';
import type { Decision } from '../rules/decide.js';
import type { AdmittedClass } from '../rules/default-claim.js';
import type { Evaluation } from '../rules/evaluate.js';
import type { AdmissionRequest, AdmissionReview } from '../schemas/types.js';
import { decodeOrThrow, decoders } from '../schemas/validators.js';
import { MalformedReviewError } from './errors.js';
import { respond, type AdmissionReviewResponse } from './respond.js';

/**
 * Checks the AdmissionReview envelope (v1 or v1beta1). What cannot be answered as an AdmissionReview (no
 * request, no uid, unknown apiVersion) is a 400 that says what is wrong.
 */
export function readEnvelope(body: unknown): AdmissionReview {
  return decodeOrThrow(decoders().admissionReview, body, (reason) => new MalformedReviewError(reason));
}

export interface ReviewOutcome {
  readonly request: AdmissionRequest;
  readonly evaluation: Evaluation;
  readonly decision: Decision;
  readonly body: AdmissionReviewResponse;
}

/**
 * One AdmissionReview, start to end, without HTTP: envelope, decision (rules/decide-request.ts), response. Shared
 * by the server and `snapshot-webhook review`. Throws only the coded envelope errors (HTTP 400).
 */
export async function reviewAdmission(body: unknown, settings: ReviewSettings): Promise<ReviewOutcome> {
  const { apiVersion, request } = readEnvelope(body);
  const { evaluation, decision } = await decideRequest(request, settings);
  return { request, evaluation, decision, body: respond(apiVersion, request.uid, decision) };
}

/** The standalone server's `admitted`: a default admitted here counts at once, before anything reports it. */
export function reserveAdmittedDefaults(index: ClassIndex): (admitted: AdmittedClass) => void {
  return ({ kind, object, becomesDefault }) => {
    if (becomesDefault) index.reserveDefault(kind, object.metadata.name ?? '', object.driver ?? '');
  };
}
