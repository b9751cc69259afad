/** Values longer than this are cut in debug logs: enough to recognise, not enough to flood. */
const MAX_STRING = 200;
/** Keys whose values look like secrets (a class's parameters may carry credentials references). */
const SECRET_KEY = /secret|token|password|passwd|credential|private|apikey|api-key|key$/i;

/**
 * A copy of a request or response fit for a debug log: secret-looking values replaced, long strings cut,
 * deep structures stopped at a fixed depth.
 */
export function redactForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}...(${value.length} chars)` : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 12) return '[too deep]';
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redactForLog(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    Object.defineProperty(out, key, {
      value: SECRET_KEY.test(key) && typeof inner === 'string' ? '[redacted]' : redactForLog(inner, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
