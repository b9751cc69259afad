import createError from '@fastify/error';

/**
 * Every error the HTTP layer answers with, in one table. Each becomes a JSON body
 * `{ statusCode, code, error, message }`; none is a 500.
 */
export const MalformedReviewError = createError('SW_MALFORMED_REVIEW', 'malformed AdmissionReview: %s', 400);
export const MalformedConversionReviewError = createError(
  'SW_MALFORMED_CONVERSION_REVIEW',
  'malformed ConversionReview: %s',
  400,
);
export const NotJsonError = createError('SW_NOT_JSON', 'request body is not JSON: %s', 400);
export const EmptyBodyError = createError(
  'SW_EMPTY_BODY',
  'request body is empty; send an admission.k8s.io AdmissionReview as JSON',
  400,
);
export const NotUtf8Error = createError('SW_NOT_UTF8', 'request body is not valid UTF-8', 400);
export const UnsupportedMediaTypeError = createError(
  'SW_UNSUPPORTED_MEDIA_TYPE',
  'unsupported content type %s; send application/json',
  415,
);
export const BodyTooLargeError = createError('SW_BODY_TOO_LARGE', 'request body is larger than %s bytes', 413);
export const TooComplexError = createError(
  'SW_TOO_COMPLEX',
  'request body has more than %s JSON objects and arrays; an AdmissionReview of a snapshot object has a few hundred',
  413,
);
export const NotFoundError = createError(
  'SW_NOT_FOUND',
  'no route %s %s; admission paths are POST /validate, /volumesnapshot, /volumegroupsnapshot',
  404,
);
