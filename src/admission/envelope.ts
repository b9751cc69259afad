import type { AdmissionReview } from '../schemas/types.js';
import { decoders, describeErrors } from '../schemas/validators.js';
import { MalformedReviewError } from './errors.js';

/**
 * Checks the AdmissionReview envelope (v1 or v1beta1). What cannot be answered as an AdmissionReview (no
 * request, no uid, unknown apiVersion) is a 400 that says what is wrong.
 */
export function readEnvelope(body: unknown): AdmissionReview {
  const validate = decoders().admissionReview;
  if (validate(body)) return body;
  throw new MalformedReviewError(describeErrors(validate.errors));
}
