import t from 'tap';
import { reviewAdmission } from '../src/admission/review.js';
import { decide } from '../src/rules/decide.js';
import { deny, warn } from '../src/rules/finding.js';
import { reviewDeps } from './helpers/app.js';
import { FIXTURES, readJson } from './helpers/fixtures.js';

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
  t.same(decide(findings), { allowed: false, denial: findings[1], warnings: ['w1', 'also: d2'], softened: false });
  const soft = decide(findings, { mode: 'enforce', warnRules: new Set(['field-immutable']) });
  t.same(soft, { allowed: false, denial: findings[2], warnings: ['w1', 'would be denied: d1'], softened: false });
  t.same(decide([]), { allowed: true, denial: undefined, warnings: [], softened: false });
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
    'default snapshot class: new-default already exists for driver: new.csi.example.com',
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
