import type { Decision } from '../rules/decide.js';
import { BOUNDS } from '../limits/bounds.js';

export interface AdmissionStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  readonly warnings?: readonly string[];
}

export interface AdmissionReviewResponse {
  readonly apiVersion: string;
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

function clip(warning: string): string {
  return warning.length <= BOUNDS.warningChars ? warning : `${warning.slice(0, BOUNDS.warningChars - 3)}...`;
}

/**
 * Builds the answer: always the request's apiVersion and uid, `kind: AdmissionReview`. A denial carries a
 * status whose message the apiserver shows as `admission webhook "<name>" denied the request: <message>`.
 * Code 400 is what the apiserver reported for upstream's denials, which carried no code.
 */
export function respond(apiVersion: string, uid: string, decision: Decision): AdmissionReviewResponse {
  const warnings = decision.warnings.length > 0 ? { warnings: decision.warnings.map(clip) } : {};
  const denial = decision.denial;
  if (decision.allowed || denial === undefined) {
    return { apiVersion, kind: 'AdmissionReview', response: { uid, allowed: true, ...warnings } };
  }
  const code = denial.code ?? 400;
  const status: AdmissionStatus = { code, reason: REASONS[code] ?? 'BadRequest', message: denial.message };
  return { apiVersion, kind: 'AdmissionReview', response: { uid, allowed: false, status, ...warnings } };
}
