import { jsonString } from '../json/json-string.js';
import type { Decision } from '../rules/decide.js';

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

/** The rule book keeps warnings short; kubectl prints each on its own line. */
export const WARNING_MAX = 119;

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

function clip(warning: string): string {
  return warning.length <= WARNING_MAX ? warning : `${warning.slice(0, WARNING_MAX - 3)}...`;
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

/**
 * `JSON.stringify(review)` for an answer built by `respond`, written as one template: the same keys in the
 * same order. The server answers every request with it; V8's generic serializer walks the object key by key
 * (about 5,000 instructions an answer, counted with callgrind; docs/benchmarks.md). A test checks it against
 * `JSON.stringify` on every admission fixture and on strings that need escaping.
 */
export function responseText(review: AdmissionReviewResponse): string {
  const { uid, allowed, status, warnings } = review.response;
  const statusText =
    status === undefined
      ? ''
      : `,"status":{"code":${status.code},"reason":${jsonString(status.reason)},"message":${jsonString(status.message)}}`;
  const warningsText = warnings === undefined ? '' : `,"warnings":[${warnings.map(jsonString).join(',')}]`;
  return (
    `{"apiVersion":${jsonString(review.apiVersion)},"kind":"AdmissionReview",` +
    `"response":{"uid":${jsonString(uid)},"allowed":${allowed}${statusText}${warningsText}}}`
  );
}
