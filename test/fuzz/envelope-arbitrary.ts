import fc from 'fast-check';
import { FIXTURES, filesUnder, readJson } from '../helpers/fixtures.js';

/** Valid AdmissionReviews to start from: every admission fixture, in both envelope versions. */
const seeds: unknown[] = filesUnder(`${FIXTURES}admission`).flatMap((file) => {
  const review = readJson<{ review: Record<string, unknown> }>(file).review;
  return [review, { ...review, apiVersion: 'admission.k8s.io/v1beta1' }];
});

type Json = unknown;

/** Every path (as keys) inside a JSON value, the root included. */
function paths(value: Json, prefix: string[] = [], out: string[][] = []): string[][] {
  out.push(prefix);
  // A deep-nesting marker is a leaf: mutating inside it would make it something else.
  if (typeof value === 'object' && value !== null && !(DEEP in value) && prefix.length < 12) {
    for (const key of Object.keys(value)) paths((value as Record<string, Json>)[key], [...prefix, key], out);
  }
  return out;
}

function setAt(root: Json, path: string[], value: Json | typeof REMOVE): Json {
  if (path.length === 0) return value === REMOVE ? undefined : value;
  const copy: Record<string, Json> = Array.isArray(root)
    ? ([...root] as unknown as Record<string, Json>)
    : { ...(root as Record<string, Json>) };
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) {
    if (value === REMOVE) delete copy[head];
    else Object.defineProperty(copy, head, { value, enumerable: true, writable: true, configurable: true });
  } else copy[head] = setAt(copy[head], rest, value);
  return copy;
}
const REMOVE = Symbol('remove');

/**
 * Arrays nested 1,001 to 50,000 deep. They stay a marker until the body is written as text (toBody), because
 * JSON.stringify itself overflows the stack a few thousand levels down.
 */
const DEEP = '@@deep@@';
/**
 * How big the largest values get (1: up to 100,000 levels and 200 KB strings). Volume runs (npm run fuzz) use
 * FUZZ_SIZE_SCALE=0.02 (still past 1,000 levels) to send a million cases in minutes; the test suite runs at 1.
 */
const SCALE = Number(process.env.FUZZ_SIZE_SCALE ?? 1);
const deepNesting = fc.integer({ min: 1001, max: 1001 + Math.round(49_000 * SCALE) }).map((depth) => ({ [DEEP]: depth }) as Json);
const DEEP_MARK = new RegExp(`"${DEEP}(\\d+)"`, 'g');
function toBody(review: Json): Buffer {
  const text = JSON.stringify(review, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[DEEP] === 'number'
      ? `${DEEP}${(value as Record<string, number>)[DEEP]}`
      : value,
  );
  return Buffer.from(
    (text ?? '').replace(DEEP_MARK, (_m, depth: string) => '['.repeat(Number(depth)) + ']'.repeat(Number(depth))),
  );
}
const hugeString = fc.integer({ min: 10_000, max: 10_000 + Math.round(190_000 * SCALE) }).map((n) => 'x'.repeat(n));
const hostileKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', '');
const anyValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepNesting },
  { weight: 2, arbitrary: fc.constantFrom(null, '', 0, -1, 1e308, true, [], {}, 'CREATE', 'UPDATE', 'DELETE') },
  { weight: 1, arbitrary: fc.dictionary(hostileKey, fc.jsonValue({ maxDepth: 2 })) },
);

/** What one case sends: a body (as bytes) and its content type. */
export interface FuzzCase {
  readonly body: Buffer;
  readonly uid: string | undefined;
  readonly description: string;
}

const mutated = fc
  .record({
    seed: fc.constantFrom(...seeds),
    mutations: fc.array(
      fc.tuple(fc.nat(), fc.oneof(anyValue, fc.constant(REMOVE as unknown)), fc.option(hostileKey, { nil: undefined })),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ seed, mutations }) => {
    let review: Json = seed;
    for (const [pick, value, key] of mutations) {
      const all = paths(review);
      const path = all[pick % all.length] as string[];
      review = setAt(review, key === undefined ? path : [...path, key], value as Json);
    }
    return review;
  });

function uidOf(review: Json): string | undefined {
  const request = (review as { request?: { uid?: unknown } } | null)?.request;
  return typeof request?.uid === 'string' ? request.uid : undefined;
}

/**
 * A valid UPDATE of a VolumeGroupSnapshot whose selector nests objects up to 100,000 levels deep, old and new
 * differing at the bottom: the immutability check must compare them without taking the server down.
 */
const deepText: fc.Arbitrary<FuzzCase> = fc
  .tuple(fc.integer({ min: 1001, max: 1001 + Math.round(99_000 * SCALE) }), fc.boolean())
  .map(([depth, differ]) => {
    const deep = (leaf: string): string => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
    const group = (leaf: string): string =>
      `{"apiVersion":"groupsnapshot.storage.k8s.io/v1beta1","kind":"VolumeGroupSnapshot","metadata":{"name":"g","namespace":"n"},"spec":{"source":{"selector":${deep(leaf)}}}}`;
    const uid = `deep-${depth}`;
    const body =
      `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","kind":{"group":"groupsnapshot.storage.k8s.io","version":"v1beta1","kind":"VolumeGroupSnapshot"},` +
      `"resource":{"group":"groupsnapshot.storage.k8s.io","version":"v1beta1","resource":"volumegroupsnapshots"},"operation":"UPDATE","object":${group('1')},"oldObject":${group(differ ? '2' : '1')}}}`;
    return { body: Buffer.from(body), uid, description: `a selector ${depth} levels deep` };
  });

/** Random and mutated AdmissionReviews, some as broken bytes. */
export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  {
    weight: 6,
    arbitrary: mutated.map((review) => ({
      body: Buffer.from(JSON.stringify(review) ?? ''),
      uid: uidOf(review),
      description: 'mutated review',
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .jsonValue()
      .map((v) => ({ body: Buffer.from(JSON.stringify(v) ?? ''), uid: uidOf(v), description: 'random JSON' })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(mutated, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat()).map(([review, junk, at]) => {
      const text = toBody(review);
      const i = at % (text.length + 1);
      return {
        body: Buffer.concat([text.subarray(0, i), Buffer.from(junk), text.subarray(i)]),
        uid: undefined,
        description: 'bytes spliced in (not UTF-8, not JSON)',
      };
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'binary', maxLength: 200 })
      .map((s) => ({ body: Buffer.from(s), uid: undefined, description: 'random text' })),
  },
  { weight: 1, arbitrary: deepText },
);

/** The answer must be one of these: a decision (200) or a coded error (4xx); never 5xx or a dropped connection. */
export function checkAnswer(c: FuzzCase, status: number, body: string): string | undefined {
  if (![200, 400, 413, 415].includes(status)) return `status ${status}`;
  let parsed: {
    apiVersion?: unknown;
    kind?: unknown;
    response?: { uid?: unknown; allowed?: unknown };
    statusCode?: unknown;
    message?: unknown;
  };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return 'the answer is not JSON';
  }
  if (status !== 200)
    return parsed.statusCode === status && typeof parsed.message === 'string'
      ? undefined
      : 'an error body without statusCode and message';
  if (parsed.kind !== 'AdmissionReview') return 'kind is not AdmissionReview';
  if (parsed.apiVersion !== 'admission.k8s.io/v1' && parsed.apiVersion !== 'admission.k8s.io/v1beta1')
    return 'unknown apiVersion';
  if (typeof parsed.response?.allowed !== 'boolean') return 'response.allowed is not a boolean';
  if (c.uid !== undefined && parsed.response.uid !== c.uid) return 'the uid is not echoed';
  return undefined;
}
