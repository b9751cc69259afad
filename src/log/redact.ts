import { BOUNDS } from '../limits/bounds.js';
/** Keys whose values look like secrets. */
const SECRET_KEY = /secret|token|password|passwd|pwd|credential|private|apikey|api-key|authorization|connectionstring|key$/i;
/**
 * Keys whose every value is withheld: a class's or content's `parameters` (drivers put credentials there) and
 * `userInfo.extra` (authenticators put tokens and session data there).
 */
const WITHHELD_MAPS = new Set(['parameters', 'extra']);
/** kubectl's copy of the whole object as applied, parameters and all. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Secret-shaped text inside any string: PEM blocks, JWTs, bearer tokens, passwords in URLs and connection strings. */
const SECRET_TEXT: readonly [RegExp, string][] = [
  [/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)/g, '[redacted PEM block]'],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, '[redacted token]'],
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]'],
  [/(:\/\/[^/\s:@]*:)[^@\s/]+@/g, '$1[redacted]@'],
  [/\b(password|passwd|pwd|secret|token)"?\s*[=:]\s*"?[^;&\s,"'}]+/gi, '$1=[redacted]'],
];

function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_TEXT) out = out.replace(pattern, replacement);
  return out.length > BOUNDS.logStringChars ? `${out.slice(0, BOUNDS.logStringChars)}...(${text.length} chars)` : out;
}

function withheld(inner: unknown): unknown {
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return '[redacted]';
  return Object.fromEntries(
    Object.keys(inner)
      .slice(0, BOUNDS.logItems)
      .map((k) => [k, '[redacted]']),
  );
}

function redactEntry(key: string, inner: unknown, depth: number): unknown {
  if (key === LAST_APPLIED && typeof inner === 'string') return `[redacted: ${inner.length} characters]`;
  if (WITHHELD_MAPS.has(key)) return withheld(inner);
  if (SECRET_KEY.test(key) && typeof inner === 'string') return '[redacted]';
  return redactForLog(inner, depth + 1);
}

/**
 * A copy of a request or response fit for a debug log: secret-looking keys and text replaced, parameters and
 * userInfo.extra withheld (keys kept), kubectl's last-applied copy dropped, long strings cut, deep structures
 * stopped at a fixed depth.
 */
export function redactForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > BOUNDS.logDepth) return '[too deep]';
  if (Array.isArray(value)) return value.slice(0, BOUNDS.logItems).map((v) => redactForLog(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    Object.defineProperty(out, key, {
      value: redactEntry(key, inner, depth),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
