import { MalformedReviewError } from '../admission/errors.js';
import { convertObject, isRecord } from './convert-object.js';

/** The ConversionReview versions the apiserver may send; the answer has the request's. */
export const CONVERSION_REVIEW_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;

export interface ConversionRequest {
  readonly uid: string;
  readonly desiredAPIVersion: string;
  readonly objects: readonly unknown[];
}

export interface ConversionOutcome {
  readonly request: ConversionRequest;
  /** `from` versions of the objects, for metrics (bounded by the caller). */
  readonly fromVersions: readonly string[];
  readonly kinds: readonly string[];
  readonly failure: string | undefined;
  readonly body: Record<string, unknown>;
}

/** Checks the envelope; throws the coded 400 error with what is wrong. */
function readRequest(body: unknown): { apiVersion: string; request: ConversionRequest } {
  if (!isRecord(body)) throw new MalformedReviewError('(root) must be a ConversionReview object');
  const { apiVersion, kind, request } = body;
  if (!CONVERSION_REVIEW_VERSIONS.some((v) => v === apiVersion)) {
    throw new MalformedReviewError(`apiVersion must be one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}`);
  }
  if (kind !== 'ConversionReview') throw new MalformedReviewError('kind must be ConversionReview');
  if (!isRecord(request)) throw new MalformedReviewError('/request must be an object');
  if (typeof request.uid !== 'string' || request.uid === '')
    throw new MalformedReviewError("/request must have a non-empty 'uid'");
  if (typeof request.desiredAPIVersion !== 'string') throw new MalformedReviewError("/request must have 'desiredAPIVersion'");
  if (!Array.isArray(request.objects)) throw new MalformedReviewError("/request must have 'objects' (a list)");
  return {
    apiVersion: apiVersion as string,
    request: { uid: request.uid, desiredAPIVersion: request.desiredAPIVersion, objects: request.objects },
  };
}

/**
 * One ConversionReview: every object converted, or none (the first failure names its object and why). Never
 * runs the admission rules. `reparse` reads JSON text as losslessly as the body was read.
 */
export function reviewConversion(body: unknown, reparse: (text: string) => unknown): ConversionOutcome {
  const { apiVersion, request } = readRequest(body);
  const converted: unknown[] = [];
  let failure: string | undefined;
  for (const object of request.objects) {
    const result = convertObject(object, request.desiredAPIVersion, reparse);
    if (!result.ok) {
      failure = result.message;
      break;
    }
    converted.push(result.object);
  }
  const response =
    failure === undefined
      ? { uid: request.uid, convertedObjects: converted, result: { status: 'Success' } }
      : {
          uid: request.uid,
          convertedObjects: [],
          result: { status: 'Failure', message: `cannot convert to ${request.desiredAPIVersion.slice(0, 100)}: ${failure}` },
        };
  const field = (o: unknown, key: string): string => (isRecord(o) && typeof o[key] === 'string' ? (o[key] as string) : '');
  return {
    request,
    fromVersions: request.objects.map((o) => field(o, 'apiVersion')),
    kinds: request.objects.map((o) => field(o, 'kind')),
    failure,
    body: { apiVersion, kind: 'ConversionReview', response },
  };
}
