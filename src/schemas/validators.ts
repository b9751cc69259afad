import type { ErrorObject, ValidateFunction } from 'ajv';
import type {
  AdmissionReview,
  ConversionReview,
  SnapshotClass,
  VolumeGroupSnapshot,
  VolumeGroupSnapshotContent,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from './types.js';
import * as compiled from './validators.generated.js';

export type Decoder<T> = ValidateFunction<T>;

export interface Decoders {
  readonly admissionReview: Decoder<AdmissionReview>;
  readonly conversionReview: Decoder<ConversionReview>;
  readonly volumeSnapshot: Decoder<VolumeSnapshot>;
  readonly volumeSnapshotContent: Decoder<VolumeSnapshotContent>;
  readonly volumeGroupSnapshot: Decoder<VolumeGroupSnapshot>;
  readonly volumeGroupSnapshotContent: Decoder<VolumeGroupSnapshotContent>;
  readonly snapshotClass: Decoder<SnapshotClass>;
}

/**
 * The validators, compiled ahead of time from schemas/*.schema.json by schemas/compile-validators.mjs (Ajv
 * standalone code): nothing is read or compiled at start, and the server needs no schema files at run time.
 */
const COMPILED: Decoders = {
  admissionReview: compiled.admissionReview as unknown as Decoder<AdmissionReview>,
  conversionReview: compiled.conversionReview as unknown as Decoder<ConversionReview>,
  volumeSnapshot: compiled.volumeSnapshot as unknown as Decoder<VolumeSnapshot>,
  volumeSnapshotContent: compiled.volumeSnapshotContent as unknown as Decoder<VolumeSnapshotContent>,
  volumeGroupSnapshot: compiled.volumeGroupSnapshot as unknown as Decoder<VolumeGroupSnapshot>,
  volumeGroupSnapshotContent: compiled.volumeGroupSnapshotContent as unknown as Decoder<VolumeGroupSnapshotContent>,
  snapshotClass: compiled.snapshotClass as unknown as Decoder<SnapshotClass>,
};

export function decoders(): Decoders {
  return COMPILED;
}

/** The body as its decoder's type, or `fail` with one line saying what is wrong (an envelope's coded 400). */
export function decodeOrThrow<T>(decode: Decoder<T>, body: unknown, fail: (reason: string) => Error): T {
  if (decode(body)) return body;
  throw fail(describeErrors(decode.errors));
}

/** What an error says past its place: Ajv's message, and the allowed values of an enum. */
function errorText(error: ErrorObject): string {
  const allowed = error.keyword === 'enum' ? ` (${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
  return `${error.message ?? 'is invalid'}${allowed}`;
}

/** One line saying what is wrong, e.g. `/spec/source/volumeHandle must be string,null`. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (first === undefined) return 'does not match its schema';
  return `${first.instancePath === '' ? '(root)' : first.instancePath} ${errorText(first)}`;
}

/** The keys a JSON pointer names, unescaped (`~1` is `/`, `~0` is `~`). */
function pointerKeys(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A JSON pointer as a field path a user reads: `metadata.annotations["a.io/b"]`, `items[0]`. */
function fieldPath(pointer: string): string {
  return pointerKeys(pointer)
    .map((s, i) =>
      /^\d+$/.test(s) ? `[${s}]` : /^[A-Za-z_$][\w$]*$/.test(s) ? `${i === 0 ? '' : '.'}${s}` : `[${JSON.stringify(s)}]`,
    )
    .join('');
}

/** The value a JSON pointer names in `root`, or undefined. */
function at(root: unknown, pointer: string): unknown {
  let value = root;
  for (const key of pointerKeys(pointer)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/**
 * One line saying what is wrong with an object a user wrote, by field path, e.g.
 * `metadata.annotations["snapshot.storage.kubernetes.io/is-default-class"] must be string, not the boolean true:
 * quote it ("true")`. A bare `true`, `yes` or `1` in YAML is a boolean or a number, not the string a field wants.
 */
export function describeObjectErrors(errors: readonly ErrorObject[] | null | undefined, object: unknown): string {
  const first = errors?.[0];
  if (first === undefined) return 'does not match its schema';
  const where = first.instancePath === '' ? 'it' : fieldPath(first.instancePath);
  if (first.keyword !== 'type') return `${where} ${errorText(first)}`;
  const types = String((first.params as { type: unknown }).type).split(',');
  const actual = at(object, first.instancePath);
  const quote =
    types[0] === 'string' && (typeof actual === 'boolean' || typeof actual === 'number')
      ? `, not the ${typeof actual} ${String(actual)}: quote it ("${String(actual)}")`
      : '';
  return `${where} must be ${types.join(' or ')}${quote}`;
}
