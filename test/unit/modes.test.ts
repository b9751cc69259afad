import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import { decide } from '../../src/rules/decide.js';
import { deny, warn } from '../../src/rules/finding.js';
import { reviewDeps } from '../helpers/review-deps.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

const review = (name: string): unknown => readJson<{ review: unknown }>(`${FIXTURES}admission/${name}.json`).review;

t.test('warn mode lets a denial through as a warning', async (t) => {
  const deps = reviewDeps('cluster', { modes: { mode: 'warn', warnRules: new Set() } });
  const outcome = await reviewAdmission(review('volumesnapshotclasses/v1/create-second-default'), deps);
  t.same(outcome.body.response, {
    uid: 'volumesnapshotclasses-v1-create-second-default',
    allowed: true,
    warnings: ['would be denied: default snapshot class: csi-hostpath-snapclass already exists for driver: hostpath.csi.k8s.io'],
  });
  t.equal(outcome.decision.softened, true);
});

t.test('warn mode: a class update whose old object is not a class is answered, and its new default counted', async (t) => {
  const admitted: string[] = [];
  const deps = reviewDeps('cluster', {
    modes: { mode: 'warn', warnRules: new Set() },
    admitted: (write) => admitted.push(`${write.object.metadata.name ?? ''} ${String(write.becomesDefault)}`),
  });
  const body = review('volumesnapshotclasses/v1/create-default-new-driver') as { request: Record<string, unknown> };
  const update = { ...body, request: { ...body.request, operation: 'UPDATE', oldObject: { driver: 'x' } } };
  const outcome = await reviewAdmission(update, deps);
  t.equal(outcome.body.response.allowed, true);
  t.match(outcome.body.response.warnings?.[0], /^would be denied: cannot decode the VolumeSnapshotClass in request\.oldObject/);
  t.same(admitted, [`${String((body.request.object as { metadata: { name: string } }).metadata.name)} true`]);
});

t.test('per-rule warn: only the named rule is softened', async (t) => {
  const deps = reviewDeps('cluster', { modes: { mode: 'enforce', warnRules: new Set(['field-not-empty'] as const) } });
  const soft = await reviewAdmission(review('volumesnapshots/v1/create-empty-class-name'), deps);
  t.equal(soft.body.response.allowed, true);
  t.same(soft.body.response.warnings, ['would be denied: Spec.VolumeSnapshotClassName must not be the empty string']);
  const hard = await reviewAdmission(review('volumesnapshots/v1/create-both-sources'), deps);
  t.equal(hard.body.response.allowed, false, 'other rules still deny');
});

t.test('a cache that cannot answer denies even in warn mode', async (t) => {
  const deps = reviewDeps('unavailable', { modes: { mode: 'warn', warnRules: new Set() } });
  const outcome = await reviewAdmission(review('volumesnapshotclasses/v1/create-default-cache-unavailable'), deps);
  t.equal(outcome.body.response.allowed, false);
  t.equal(outcome.body.response.status?.code, 503);
});

t.test('decide: first denial decides, the rest become warnings in order', async (t) => {
  const findings = [warn('class-not-found', 'w1'), deny('field-immutable', 'd1'), deny('field-not-empty', 'd2')];
  t.same(await decide(findings), {
    allowed: false,
    denial: findings[1],
    warnings: ['w1', 'also: d2'],
    softened: false,
    findings,
  });
  const soft = await decide(findings, { mode: 'enforce', warnRules: new Set(['field-immutable']) });
  t.same(soft, { allowed: false, denial: findings[2], warnings: ['w1', 'would be denied: d1'], softened: false, findings });
  t.same(await decide([]), { allowed: true, denial: undefined, warnings: [], softened: false, findings: [] });
});

t.test('decide: the late check is asked only when the findings allow, and its finding decides last', async (t) => {
  const late = deny('default-class-unique', 'held');
  let asked = 0;
  const ask = async () => {
    asked += 1;
    return late;
  };
  const denied = await decide([deny('field-immutable', 'd1')], undefined, ask);
  t.equal(asked, 0, 'a denied write is not claimed');
  t.equal(denied.denial?.message, 'd1');
  const warned = [warn('class-not-found', 'w1')];
  t.same(await decide(warned, undefined, ask), {
    allowed: false,
    denial: late,
    warnings: ['w1'],
    softened: false,
    findings: [...warned, late],
  });
  const inWarnMode = await decide([deny('field-immutable', 'd1')], { mode: 'warn', warnRules: new Set() }, ask);
  t.equal(asked, 2, 'a softened denial still claims');
  t.same(inWarnMode.warnings, ['would be denied: d1', 'would be denied: held']);
  t.equal(inWarnMode.allowed, true);
});

t.test('an admitted default is counted before the watch shows it; not for a dry run', async (t) => {
  const deps = reviewDeps('empty');
  const fresh = review('volumesnapshotclasses/v1/create-default-new-driver') as {
    request: { dryRun?: boolean; object: { metadata: { name: string } } };
  };
  const dry = structuredClone(fresh);
  dry.request.dryRun = true;
  t.equal((await reviewAdmission(dry, deps)).body.response.allowed, true);
  t.equal((await reviewAdmission(fresh, deps)).body.response.allowed, true, 'the first default is admitted');
  const second = structuredClone(fresh);
  second.request.object.metadata.name = 'another-default';
  t.equal(
    (await reviewAdmission(second, deps)).body.response.status?.message,
    'default snapshot class: new-default already exists for driver: new.csi.example.com' +
      '; to move the default, first remove it from new-default: kubectl annotate volumesnapshotclasses new-default snapshot.storage.kubernetes.io/is-default-class-',
    'a second one a moment later is denied, naming the first',
  );
  t.equal(
    (await reviewAdmission(fresh, deps)).body.response.allowed,
    true,
    'the same object again (a retry) is not its own rival',
  );
});

t.test('an unexpected error inside a rule is a denial, not a crash', async (t) => {
  const deps = reviewDeps('cluster', {
    classes: {
      defaultsFor: () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
      exists: () => true,
    },
  });
  const outcome = await reviewAdmission(review('volumesnapshotclasses/v1/create-default-new-driver'), deps);
  t.same(outcome.body.response.status, {
    code: 500,
    reason: 'InternalError',
    message: 'cannot check this object: Maximum call stack size exceeded',
  });
});
