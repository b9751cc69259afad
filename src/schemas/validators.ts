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

/** One line saying what is wrong, e.g. `/spec/source/volumeHandle must be string,null`. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (first === undefined) return 'does not match its schema';
  const where = first.instancePath === '' ? '(root)' : first.instancePath;
  const allowed = first.keyword === 'enum' ? ` (${(first.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
  return `${where} ${first.message ?? 'is invalid'}${allowed}`;
}
