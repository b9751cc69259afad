import fc from 'fast-check';
import t from 'tap';
import { reserveAdmittedDefaults, reviewAdmission } from '../../src/admission/review.js';
import { ClassIndex } from '../../src/classes/class-index.js';
import type { ClassView } from '../../src/classes/class-view.js';
import { decide } from '../../src/rules/decide.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { allRoutes } from '../../src/rules/table.js';
import { admissionReview, SNAPSHOT_CLASS_V1 } from '../helpers/review.mjs';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const params = { numRuns: RUNS, seed: SEED };
const options = { preventVolumeModeConversion: true };
const routes = [...allRoutes().values()];

function synced(): ClassIndex {
  const index = new ClassIndex(() => 0);
  index.replaceAll('VolumeSnapshotClass', []);
  index.replaceAll('VolumeGroupSnapshotClass', []);
  return index;
}

/** A string field as docs/rules.md distinguishes it: absent, null, "", or a value. */
const field = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constant(''), fc.constantFrom('a', 'b', 'pvc-1'));
const maybe = <T>(key: string, value: T): Record<string, T> => (value === undefined ? {} : { [key]: value });
const anyField = fc.oneof(
  field,
  fc.jsonValue({ maxDepth: 2 }),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string()),
);

/** An object of a random kind: every field the rules read, each absent, null, empty, a value or junk. */
const anyObject = fc
  .record({
    name: fc.constantFrom('x', 'y'),
    annotations: fc.option(
      fc.dictionary(
        fc.constantFrom(
          'snapshot.storage.kubernetes.io/is-default-class',
          'groupsnapshot.storage.kubernetes.io/is-default-class',
          'other',
        ),
        fc.constantFrom('true', 'True', 'false', ''),
      ),
      { nil: undefined },
    ),
    source: fc.dictionary(
      fc.constantFrom(
        'persistentVolumeClaimName',
        'volumeSnapshotContentName',
        'volumeHandle',
        'snapshotHandle',
        'selector',
        'volumeGroupSnapshotContentName',
        'volumeHandles',
        'groupSnapshotHandles',
      ),
      anyField,
    ),
    spec: fc.dictionary(
      fc.constantFrom('volumeSnapshotClassName', 'volumeGroupSnapshotClassName', 'sourceVolumeMode', 'driver'),
      anyField,
    ),
    ref: fc.dictionary(fc.constantFrom('name', 'namespace', 'uid'), field),
    driver: field,
    parameters: fc.option(fc.dictionary(fc.string(), fc.string()), { nil: undefined }),
  })
  .map((o) => ({
    metadata: { name: o.name, ...maybe('annotations', o.annotations) },
    spec: { ...o.spec, source: o.source, volumeSnapshotRef: o.ref, volumeGroupSnapshotRef: o.ref },
    ...maybe('driver', o.driver),
    ...maybe('parameters', o.parameters),
  }));

t.test('an unchanged update of any object is allowed (or undecodable)', async (t) => {
  await t.resolves(
    fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), anyObject, async (route, object) => {
        const request = { operation: 'UPDATE', resource: route, object, oldObject: structuredClone(object) };
        const evaluation = evaluate(request, synced(), options);
        const decision = await decide(evaluation.findings);
        return decision.allowed || decision.denial?.rule === 'object-undecodable';
      }),
      params,
    ),
    'the property holds',
  );
});

t.test('changing a set source field on update is denied', async (t) => {
  const sources: [string, string, string][] = [
    ['volumesnapshots', 'persistentVolumeClaimName', 'snapshot.storage.k8s.io'],
    ['volumesnapshots', 'volumeSnapshotContentName', 'snapshot.storage.k8s.io'],
    ['volumesnapshotcontents', 'volumeHandle', 'snapshot.storage.k8s.io'],
    ['volumesnapshotcontents', 'snapshotHandle', 'snapshot.storage.k8s.io'],
    ['volumegroupsnapshots', 'volumeGroupSnapshotContentName', 'groupsnapshot.storage.k8s.io'],
  ];
  await t.resolves(
    fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...sources),
        fc.constantFrom('v1', 'v1beta1'),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        async ([resource, key, group], version, before, after) => {
          fc.pre(before !== after);
          const base = {
            metadata: { name: 'o', namespace: 'n' },
            spec: { volumeSnapshotRef: { name: 's', namespace: 'n' }, volumeGroupSnapshotRef: { name: 's', namespace: 'n' } },
          };
          const old = { ...base, spec: { ...base.spec, source: { [key]: before } } };
          const updated = { ...base, spec: { ...base.spec, source: { [key]: after } } };
          const decision = await decide(
            evaluate(
              { operation: 'UPDATE', resource: { group, version, resource }, object: updated, oldObject: old },
              synced(),
              options,
            ).findings,
          );
          return !decision.allowed && decision.denial?.rule === 'field-immutable';
        },
      ),
      params,
    ),
    'the property holds',
  );
});

t.test('a VolumeSnapshot create is allowed exactly when one source is set and no field is ""', async (t) => {
  await t.resolves(
    fc.assert(
      fc.asyncProperty(fc.constantFrom('v1', 'v1beta1'), field, field, field, async (version, pvc, content, className) => {
        const object = {
          metadata: { name: 's', namespace: 'n' },
          spec: {
            source: { ...maybe('persistentVolumeClaimName', pvc), ...maybe('volumeSnapshotContentName', content) },
            ...maybe('volumeSnapshotClassName', className),
          },
        };
        const decision = await decide(
          evaluate(
            { operation: 'CREATE', resource: { group: 'snapshot.storage.k8s.io', version, resource: 'volumesnapshots' }, object },
            synced(),
            options,
          ).findings,
        );
        const isSet = (v: unknown): boolean => v !== undefined && v !== null;
        const expected = Number(isSet(pvc)) + Number(isSet(content)) === 1 && pvc !== '' && content !== '' && className !== '';
        return decision.allowed === expected;
      }),
      params,
    ),
    'the property holds',
  );
});

t.test('a VolumeSnapshotContent create is allowed exactly when one source is set and no field is ""', async (t) => {
  await t.resolves(
    fc.assert(
      fc.asyncProperty(
        field,
        field,
        field,
        field,
        field,
        async (volumeHandle, snapshotHandle, className, refName, refNamespace) => {
          const object = {
            metadata: { name: 'c' },
            spec: {
              source: { ...maybe('volumeHandle', volumeHandle), ...maybe('snapshotHandle', snapshotHandle) },
              volumeSnapshotRef: { ...maybe('name', refName), ...maybe('namespace', refNamespace) },
              ...maybe('volumeSnapshotClassName', className),
            },
          };
          const decision = await decide(
            evaluate(
              {
                operation: 'CREATE',
                resource: { group: 'snapshot.storage.k8s.io', version: 'v1', resource: 'volumesnapshotcontents' },
                object,
              },
              synced(),
              options,
            ).findings,
          );
          const isSet = (v: unknown): boolean => v !== undefined && v !== null;
          const filled = (v: unknown): boolean => typeof v === 'string' && v !== '';
          const expected =
            Number(isSet(volumeHandle)) + Number(isSet(snapshotHandle)) === 1 &&
            volumeHandle !== '' &&
            snapshotHandle !== '' &&
            className !== '' &&
            filled(refName) &&
            filled(refNamespace);
          return decision.allowed === expected;
        },
      ),
      params,
    ),
    'the property holds',
  );
});

/** One step of a class workload: a write, or the watch catching up with what was admitted. */
type Step = { op: 'create' | 'update' | 'delete'; name: string; driver: string; isDefault: boolean } | { op: 'sync' };
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const),
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      driver: fc.constantFrom('d1', 'd2'),
      isDefault: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'sync' as const }) },
);

t.test('at most one default per driver is ever admitted, even while the watch lags', async (t) => {
  await t.resolves(
    fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const index = synced();
        const truth = new Map<string, { driver: string; isDefault: boolean }>();
        const view: ClassView = index;
        const deps = {
          classes: view,
          options,
          modes: { mode: 'enforce' as const, warnRules: new Set<never>() },
          admitted: reserveAdmittedDefaults(index),
        };
        const manifest = (name: string, driver: string, isDefault: boolean) => ({
          apiVersion: 'snapshot.storage.k8s.io/v1',
          kind: 'VolumeSnapshotClass',
          metadata: {
            name,
            ...(isDefault ? { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } } : {}),
          },
          driver,
        });
        for (const s of steps) {
          if (s.op === 'sync') {
            index.replaceAll(
              'VolumeSnapshotClass',
              [...truth].map(([name, c]) => manifest(name, c.driver, c.isDefault)),
            );
            continue;
          }
          const current = truth.get(s.name);
          if (s.op === 'delete') {
            truth.delete(s.name);
            continue;
          }
          if ((s.op === 'create') !== (current === undefined)) continue; // create of an existing name, or update of a missing one
          const review = admissionReview(SNAPSHOT_CLASS_V1, {
            operation: s.op === 'create' ? 'CREATE' : 'UPDATE',
            object: manifest(s.name, s.driver, s.isDefault),
            oldObject: current === undefined ? undefined : manifest(s.name, current.driver, current.isDefault),
          });
          if ((await reviewAdmission(review, deps)).decision.allowed)
            truth.set(s.name, { driver: s.driver, isDefault: s.isDefault });
          for (const driver of ['d1', 'd2']) {
            const defaults = [...truth.values()].filter((c) => c.isDefault && c.driver === driver).length;
            if (defaults > 1) return false;
          }
        }
        return true;
      }),
      params,
    ),
    'the property holds',
  );
});
