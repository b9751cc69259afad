/**
 * What the apiserver answered when it was not a success, or that it did not answer: the one error type of the
 * cluster layer (kube-http.ts makes it; client-node's watch errors are wrapped into it). Callers branch on
 * `status` and `retryable`, never on the shape of an object or the words of a message.
 */
export class ApiserverError extends Error {
  override readonly name = 'ApiserverError';

  constructor(
    message: string,
    /** The HTTP status, or undefined when no answer came (refused, reset, timed out). */
    readonly status: number | undefined,
    /** The Status object's reason (`NotFound`, `Conflict`, `Forbidden`, ...), when the apiserver gave one. */
    readonly reason: string | undefined = undefined,
    /** The apiserver's clock at the answer (its Date header), in ms since the epoch. */
    readonly date: number | undefined = undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** Worth trying again: no answer, a conflict, throttling, or a server error. */
  get retryable(): boolean {
    const { status } = this;
    return status === undefined || status === 409 || status === 429 || status >= 500;
  }

  /** Any error from talking to the apiserver as an ApiserverError (client-node's watch sets `statusCode`). */
  static from(error: unknown): ApiserverError {
    if (error instanceof ApiserverError) return error;
    const message = error instanceof Error ? error.message : String(error);
    const status = (error as { statusCode?: unknown } | null)?.statusCode;
    return new ApiserverError(message, typeof status === 'number' ? status : undefined, undefined, undefined, { cause: error });
  }
}

/** The HTTP status of an apiserver error; undefined for any other error or when no answer came. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof ApiserverError ? error.status : undefined;
}
