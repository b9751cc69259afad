import createError from '@fastify/error';

/**
 * The errors the HTTP layer answers with before a review runs, in one table beside the server (the two a review
 * raises, a malformed AdmissionReview or ConversionReview, are with it: admission/errors.ts). Each becomes a JSON
 * body `{ statusCode, code, error, message }` (error-body.ts); none is a 500.
 */
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
/** `no route METHOD URL; ` and what the listener answers (its coded-errors plugin's `paths`). */
export const NotFoundError = createError('SW_NOT_FOUND', 'no route %s %s; %s', 404);
