/** Node 24's JSON source-text access (`context.source`) and raw JSON values, which TypeScript's lib lacks. */
interface LosslessJson {
  parse(text: string, reviver: (key: string, value: unknown, context?: { source?: string }) => unknown): unknown;
  rawJSON(text: string): unknown;
}
const json = JSON as unknown as LosslessJson;
const INTEGER = /^-?\d+$/;

/**
 * JSON.parse that keeps every integer exactly: one beyond 2^53 (a creationTime in nanoseconds, a large
 * restoreSize) becomes a raw JSON value, which JSON.stringify writes back digit for digit. Other values are
 * JSON.parse's own.
 */
export function parseLossless(text: string): unknown {
  return json.parse(text, (_key, value, context) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && INTEGER.test(context?.source ?? '')
      ? json.rawJSON(context?.source as string)
      : value,
  );
}
