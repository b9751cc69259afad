/** Printable ASCII without `"` and `\`: such a string is its own JSON text between quotes. */
const NEEDS_NO_ESCAPE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The JSON text of a string, exactly as `JSON.stringify(value)` writes it. Most strings on the admission path
 * (names, uids, kinds, rule messages) are printable ASCII without `"` or `\`, which are their own JSON text
 * between quotes. The check is a regular expression: V8 runs it as native code, which counted fewer
 * instructions than a `charCodeAt` loop in JavaScript (callgrind; docs/benchmarks.md). Anything else (control
 * characters, quotes, non-ASCII, lone surrogates) goes to `JSON.stringify`.
 */
export function jsonString(value: string): string {
  return NEEDS_NO_ESCAPE.test(value) ? `"${value}"` : JSON.stringify(value);
}
