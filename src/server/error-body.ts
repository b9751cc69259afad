import type { FastifyError } from 'fastify';

const TITLES: Readonly<Record<number, string>> = {
  404: 'Not Found',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
};

/** The one shape of every error answer: `{ statusCode, code, error, message }`, as JSON. */
export function errorBody(error: FastifyError, statusCode: number): Record<string, unknown> {
  const title = TITLES[statusCode] ?? (statusCode >= 500 ? 'Internal Server Error' : 'Bad Request');
  return { statusCode, code: error.code ?? 'SW_ERROR', error: title, message: error.message };
}
