import createError from '@fastify/error';

/**
 * The errors a review raises on a body that is JSON but not a review; the server answers them as it answers its own
 * (server/http-errors.ts): a JSON body `{ statusCode, code, error, message }`, a 400.
 */
export const MalformedReviewError = createError('SW_MALFORMED_REVIEW', 'malformed AdmissionReview: %s', 400);
export const MalformedConversionReviewError = createError(
  'SW_MALFORMED_CONVERSION_REVIEW',
  'malformed ConversionReview: %s',
  400,
);
