// Types of review.mjs for the TypeScript suites.
export interface ReviewTarget {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly resource: string;
}
export interface BuiltReview {
  apiVersion: string;
  kind: 'AdmissionReview';
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    operation: string;
    object?: unknown;
    oldObject?: unknown;
    [field: string]: unknown;
  };
}
export declare function admissionReview(
  target: ReviewTarget,
  request: { uid?: string; operation?: string; object?: unknown; oldObject?: unknown; [field: string]: unknown },
  apiVersion?: string,
): BuiltReview;
export declare const SNAPSHOT_CLASS_V1: ReviewTarget;
export declare const SNAPSHOT_V1: ReviewTarget;
