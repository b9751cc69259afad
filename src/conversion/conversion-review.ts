import { MalformedConversionReviewError } from '../admission/errors.js';
import type { ConversionRequest, ConversionReview } from '../schemas/types.js';
import { decodeOrThrow, decoders } from '../schemas/validators.js';
import { convertObject, isRecord } from './convert-object.js';
import { BOUNDS } from '../limits/bounds.js';

export type { ConversionRequest };

export interface ConversionOutcome {
  readonly request: ConversionRequest;
  /** `from` versions of the objects, for metrics (bounded by the caller). */
  readonly fromVersions: readonly string[];
  readonly kinds: readonly string[];
  readonly failure: string | undefined;
  readonly body: Record<string, unknown>;
}

/** Checks the envelope against its schema; throws the coded 400 error with what is wrong, as for admission. */
function readRequest(body: unknown): ConversionReview {
  return decodeOrThrow(decoders().conversionReview, body, (reason) => new MalformedConversionReviewError(reason));
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
          result: {
            status: 'Failure',
            message: `cannot convert to ${request.desiredAPIVersion.slice(0, BOUNDS.echoChars)}: ${failure}`,
          },
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
