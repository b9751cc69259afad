import { BOUNDS } from '../limits/bounds.js';
/**
 * The notion of equality of docs/rules.md: a field is set when present and not null; `""` and `[]` are set;
 * absent and null are the same, at every depth.
 */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (!isSet(a) || !isSet(b)) return isSet(a) === isSet(b);
  if (typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) {
    if (!sameValue(own(left, key), own(right, key))) return false;
  }
  return true;
}

/** Reads a key the user wrote, never an inherited one (`__proto__`, `constructor`). */
export function own(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A request-controlled text as a message shows it: whole up to BOUNDS.shownChars characters, else cut with its length. */
export function shown(text: string): string {
  return text.length <= BOUNDS.shownChars ? text : `${text.slice(0, BOUNDS.shownChars)}...(${text.length} characters)`;
}

/** Renders a value for a message the way a user wrote it: strings bare, structures as compact JSON, bounded. */
export function render(value: unknown): string {
  if (!isSet(value)) return '<unset>';
  // An empty name shows as "" rather than as nothing between two spaces.
  if (value === '') return '""';
  if (typeof value === 'string') return shown(value);
  try {
    return shown(JSON.stringify(value));
  } catch {
    // Only a structure too deep for the stack gets here; the message must still be produced.
    return '<value too deep to show>';
  }
}
