import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type {
  AdmissionReview,
  SnapshotClass,
  VolumeGroupSnapshot,
  VolumeGroupSnapshotContent,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from './types.js';

/** The schemas folder sits two levels above both src/schemas and dist/schemas. */
const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

export type Decoder<T> = ValidateFunction<T>;

export interface Decoders {
  readonly admissionReview: Decoder<AdmissionReview>;
  readonly volumeSnapshot: Decoder<VolumeSnapshot>;
  readonly volumeSnapshotContent: Decoder<VolumeSnapshotContent>;
  readonly volumeGroupSnapshot: Decoder<VolumeGroupSnapshot>;
  readonly volumeGroupSnapshotContent: Decoder<VolumeGroupSnapshotContent>;
  readonly snapshotClass: Decoder<SnapshotClass>;
}

function compileAll(): Decoders {
  // allErrors off: the first problem is what the user needs, and stopping early is cheaper.
  const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'))) {
    ajv.addSchema(JSON.parse(readFileSync(SCHEMA_DIR + file, 'utf8')) as object);
  }
  const get = <T>(id: string): Decoder<T> => {
    const validate = ajv.getSchema<T>(id);
    if (validate === undefined) throw new Error(`schema ${id} is missing from ${SCHEMA_DIR}`);
    return validate;
  };
  return {
    admissionReview: get('admission-review.schema.json'),
    volumeSnapshot: get('volume-snapshot.schema.json'),
    volumeSnapshotContent: get('volume-snapshot-content.schema.json'),
    volumeGroupSnapshot: get('volume-group-snapshot.schema.json'),
    volumeGroupSnapshotContent: get('volume-group-snapshot-content.schema.json'),
    snapshotClass: get('snapshot-class.schema.json'),
  };
}

let compiled: Decoders | undefined;

/** Compiled once per process, on first use (at start for the server). */
export function decoders(): Decoders {
  compiled ??= compileAll();
  return compiled;
}

/** One line saying what is wrong, e.g. `/spec/source/volumeHandle must be string,null`. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (first === undefined) return 'does not match its schema';
  const where = first.instancePath === '' ? '(root)' : first.instancePath;
  const allowed = first.keyword === 'enum' ? ` (${(first.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
  return `${where} ${first.message ?? 'is invalid'}${allowed}`;
}
