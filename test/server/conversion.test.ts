import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import t from 'tap';
import { reviewConversion } from '../../src/conversion/conversion-review.js';
import { convertObject, INFO_LIST_ANNOTATION } from '../../src/conversion/convert-object.js';
import { parseLossless } from '../../src/conversion/lossless-json.js';
import { testApp } from '../helpers/app.js';
import { FIXTURES } from '../helpers/fixtures.js';

type Json = Record<string, unknown>;
const GROUP = 'groupsnapshot.storage.k8s.io';
const VERSIONS = ['v1beta1', 'v1beta2', 'v1'] as const;
/** Compares as the wire does: lossless JSON text, key order aside. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(JSON as unknown as { isRawJSON(x: unknown): boolean }).isRawJSON(v)
      ? Object.fromEntries(Object.entries(v as Json).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
const forms = (parseLossless(readFileSync(`${FIXTURES}conversion/content-forms.json`, 'utf8')) as { forms: Record<string, Json> })
  .forms;
const form = (version: (typeof VERSIONS)[number]): Json =>
  version === 'v1' ? { ...(forms.v1beta2 as Json), apiVersion: `${GROUP}/v1` } : (forms[version] as Json);
const convert = (object: unknown, to: string): Json => {
  const result = convertObject(object, `${GROUP}/${to}`, parseLossless);
  if (!result.ok) throw new Error(result.message);
  return result.object;
};
const review = (objects: unknown[], to: string, apiVersion = 'apiextensions.k8s.io/v1'): Json => ({
  apiVersion,
  kind: 'ConversionReview',
  request: { uid: 'u-1', desiredAPIVersion: `${GROUP}/${to}`, objects },
});

t.test('a VolumeGroupSnapshotContent between every two versions, every int64 exact', async (t) => {
  for (const from of VERSIONS) {
    for (const to of VERSIONS) t.equal(canonical(convert(form(from), to)), canonical(form(to)), `${from} -> ${to}`);
  }
  const chain = ['v1beta1', 'v1', 'v1beta1', 'v1beta2', 'v1beta1', 'v1'] as const;
  const end = chain.reduce<Json>((object, to) => convert(object, to), form('v1beta2'));
  t.equal(canonical(end), canonical(form('v1')), 'a chain of conversions ends where it should');
  t.match(JSON.stringify(end), '"creationTime":1767323045123456789', 'nanoseconds beyond 2^53, digit for digit');
});

t.test('the other two kinds change apiVersion only, in every direction', async (t) => {
  const group = {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'VolumeGroupSnapshot',
    metadata: { name: 'g' },
    spec: { source: { selector: { matchLabels: { a: 'b' } } } },
    status: { creationTime: '2026-01-01T00:00:00Z', readyToUse: true },
  };
  const klass = {
    apiVersion: `${GROUP}/v1`,
    kind: 'VolumeGroupSnapshotClass',
    metadata: { name: 'c' },
    driver: 'd',
    deletionPolicy: 'Retain',
    parameters: { a: 'b' },
  };
  for (const object of [group, klass]) {
    for (const to of VERSIONS)
      t.same(convert(object, to), { ...object, apiVersion: `${GROUP}/${to}` }, `${object.kind} -> ${to}`);
  }
});

t.test('edge cases of the status and the annotation', async (t) => {
  const content = (status: unknown, annotation?: string): Json => ({
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'VolumeGroupSnapshotContent',
    metadata: { name: 'c', ...(annotation === undefined ? {} : { annotations: { [INFO_LIST_ANNOTATION]: annotation } }) },
    spec: { driver: 'd' },
    ...(status === undefined ? {} : { status }),
  });
  t.same(convert(content(undefined), 'v1beta2'), { ...content(undefined), apiVersion: `${GROUP}/v1beta2` }, 'no status');
  t.same(convert(content({}), 'v1beta2').status, {}, 'an empty status');
  t.same(
    convert({ ...content({ volumeSnapshotInfoList: null }), apiVersion: `${GROUP}/v1beta2` }, 'v1beta1').status,
    {},
    'a null list is an absent one',
  );
  t.same(
    convert({ ...content({ volumeSnapshotInfoList: [] }), apiVersion: `${GROUP}/v1beta2` }, 'v1beta1').status,
    { volumeSnapshotHandlePairList: [] },
    'an empty list',
  );
  // As upstream's conversion does (its testdata case): the annotation alone restores the status, and goes.
  const full = '[{"volumeHandle":"v","snapshotHandle":"s","creationTime":1767323045123456789,"restoreSize":9007199254740993}]';
  for (const status of [undefined, {}, { readyToUse: true }, { volumeSnapshotHandlePairList: null }]) {
    const orphan = convertObject(content(status, full), `${GROUP}/v1beta2`, parseLossless);
    const object = orphan.ok ? orphan.object : {};
    t.same(
      [(object.metadata as Json).annotations, JSON.stringify((object.status as Json).volumeSnapshotInfoList)],
      [undefined, full],
      `an annotation with status ${JSON.stringify(status)}: the status restored from it, exact, and the annotation dropped`,
    );
  }
  const pairs = [{ volumeHandle: 'v', snapshotHandle: 's' }];
  const stale = convert(
    content({ volumeSnapshotHandlePairList: pairs }, '[{"volumeHandle":"other","snapshotHandle":"s"}]'),
    'v1beta2',
  );
  t.same((stale.status as Json).volumeSnapshotInfoList, pairs, 'an annotation that does not match the pairs: the pairs decide');
  for (const bad of ['null', '{}', '[1]', 'not json']) {
    const result = convertObject(content({ volumeSnapshotHandlePairList: pairs }, bad), `${GROUP}/v1beta2`, parseLossless);
    t.match(
      result,
      {
        ok: false,
        message:
          /^VolumeGroupSnapshotContent c: annotation groupsnapshot.storage.kubernetes.io\/volume-snapshot-info-list is not (a list of entries|JSON)/,
      },
      `annotation ${bad}`,
    );
  }
});

t.test('reviews: all or nothing, answered in kind, a clear failure', async (t) => {
  const objects = Array.from({ length: 100 }, (_, i) => ({ ...form('v1beta2'), metadata: { name: `c-${i}` } }));
  const ok = reviewConversion(review(objects, 'v1beta1', 'apiextensions.k8s.io/v1beta1'), parseLossless);
  t.equal(ok.body.apiVersion, 'apiextensions.k8s.io/v1beta1', 'answered in the request’s apiVersion');
  t.equal(((ok.body.response as Json).convertedObjects as unknown[]).length, 100, '100 objects');
  const mixed = reviewConversion(
    review(
      [form('v1beta2'), { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'x' } }],
      'v1',
    ),
    parseLossless,
  );
  t.same((mixed.body.response as Json).result, {
    status: 'Failure',
    message: `cannot convert to ${GROUP}/v1: VolumeSnapshot x: cannot convert from apiVersion snapshot.storage.k8s.io/v1`,
  });
  t.same((mixed.body.response as Json).convertedObjects, [], 'none converted when one cannot be');
  const unknownTarget = reviewConversion(review([form('v1beta2')], 'v2'), parseLossless);
  t.match((unknownTarget.body.response as Json).result, {
    status: 'Failure',
    message: /cannot convert to apiVersion groupsnapshot.storage.k8s.io\/v2/,
  });
  for (const [body, why] of [
    [[], 'malformed ConversionReview: (root) must be object'],
    [
      { apiVersion: 'admission.k8s.io/v1', kind: 'ConversionReview', request: {} },
      'malformed ConversionReview: /apiVersion must be equal to one of the allowed values (apiextensions.k8s.io/v1, apiextensions.k8s.io/v1beta1)',
    ],
    [{ ...review([], 'v1'), kind: 'AdmissionReview' }, 'malformed ConversionReview: /kind must be equal to constant'],
    [
      { ...review([], 'v1'), request: { uid: '', desiredAPIVersion: 'x', objects: [] } },
      'malformed ConversionReview: /request/uid must NOT have fewer than 1 characters',
    ],
    [
      { ...review([], 'v1'), request: { uid: 'u', desiredAPIVersion: 'x' } },
      "malformed ConversionReview: /request must have required property 'objects'",
    ],
    [
      { ...review([], 'v1'), request: { uid: 'u', desiredAPIVersion: 'x', objects: {} } },
      'malformed ConversionReview: /request/objects must be array',
    ],
  ] as const) {
    t.throws(() => reviewConversion(body, parseLossless), {
      code: 'SW_MALFORMED_CONVERSION_REVIEW',
      message: why,
      statusCode: 400,
    });
  }
});

t.test('POST /convert over HTTP: lossless on the wire, coded errors, never the admission rules', async (t) => {
  const { app, log } = testApp();
  t.teardown(() => app.close());
  const text = JSON.stringify(review([form('v1beta2')], 'v1beta1')).replace('"u-1"', '"u-http"');
  const answer = await app.inject({
    method: 'POST',
    url: '/convert',
    headers: { 'content-type': 'application/json' },
    payload: text,
  });
  t.equal(answer.statusCode, 200);
  t.match(answer.body, '\\"creationTime\\":1767323045123456789', 'the int64 in the annotation, exact');
  const bad = await app.inject({ method: 'POST', url: '/convert', headers: { 'content-type': 'text/plain' }, payload: '{}' });
  t.same([bad.statusCode, JSON.parse(bad.body).code], [415, 'SW_UNSUPPORTED_MEDIA_TYPE']);
  const notJson = await app.inject({
    method: 'POST',
    url: '/convert',
    headers: { 'content-type': 'application/json' },
    payload: '{',
  });
  t.same([notJson.statusCode, JSON.parse(notJson.body).code], [400, 'SW_NOT_JSON']);
  t.notOk(
    log.lines.some((l) => l.msg === 'allowed' || l.msg === 'denied'),
    'no admission decision was made',
  );
});

t.test('properties: v1beta2 -> v1beta1 -> v1beta2 is the identity; v1 <-> v1beta2 changes apiVersion only', async () => {
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => parseLossless(n.toString()));
  const entry = fc.record(
    { volumeHandle: fc.string(), snapshotHandle: fc.string(), creationTime: int64, readyToUse: fc.boolean(), restoreSize: int64 },
    { requiredKeys: ['volumeHandle', 'snapshotHandle'] },
  );
  const content = fc.record({
    metadata: fc.record(
      {
        name: fc.string({ minLength: 1 }),
        annotations: fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => k !== INFO_LIST_ANNOTATION && k !== '__proto__'),
          fc.string(),
        ),
      },
      { requiredKeys: ['name'] },
    ),
    status: fc.record(
      { readyToUse: fc.boolean(), volumeSnapshotInfoList: fc.array(entry, { maxLength: 5 }) },
      { requiredKeys: [] },
    ),
  });
  fc.assert(
    fc.property(content, (body) => {
      const original = { apiVersion: `${GROUP}/v1beta2`, kind: 'VolumeGroupSnapshotContent', ...body };
      const annotations = (original.metadata as Json).annotations as Json | undefined;
      const back = convert(convert(original, 'v1beta1'), 'v1beta2');
      const expected =
        annotations !== undefined &&
        Object.keys(annotations).length === 0 &&
        (original.status as Json).volumeSnapshotInfoList !== undefined
          ? { ...original, metadata: { name: (original.metadata as Json).name } }
          : original;
      return (
        canonical(back) === canonical(expected) && canonical(convert(convert(original, 'v1'), 'v1beta2')) === canonical(original)
      );
    }),
    { numRuns: 500 },
  );
});
