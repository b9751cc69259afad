// A resource the webhook configuration never sends, sent anyway (a hand-made configuration, a newer CRD): allowed
// unchecked, with the `unhandled-resource` warning naming it, bounded in length.
import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import type { ReviewSettings } from '../../src/rules/decide-request.js';
import { admissionReview } from '../helpers/review.mjs';
import { classSet } from '../helpers/fixtures.js';

const settings: ReviewSettings = {
  classes: classSet('empty'),
  options: { preventVolumeModeConversion: true },
  modes: { mode: 'enforce', warnRules: new Set() },
};

const CASES = [
  {
    name: 'a resource of the group the webhook does not know',
    target: {
      group: 'snapshot.storage.k8s.io',
      version: 'v1',
      kind: 'VolumeSnapshotLocation',
      resource: 'volumesnapshotlocations',
    },
    warning: 'snapshot-webhook does not check volumesnapshotlocations.v1.snapshot.storage.k8s.io; allowed unchecked',
  },
  {
    name: 'a core resource',
    target: { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps' },
    warning: 'snapshot-webhook does not check configmaps.v1; allowed unchecked',
  },
  {
    // The request names the resource: its length is the request's, so the warning keeps the first 68 characters,
    // and the warning fits the 119 characters of BOUNDS.warningChars whole.
    name: 'a resource name over the bound',
    target: { group: 'example.com', version: 'v1', kind: 'Long', resource: 'r'.repeat(300) },
    warning: `snapshot-webhook does not check ${'r'.repeat(68)}; allowed unchecked`,
  },
];

for (const { name, target, warning } of CASES) {
  t.test(name, async (t) => {
    const review = admissionReview(target, { object: { metadata: { name: 'x' } } });
    const outcome = await reviewAdmission(review, settings);
    t.equal(outcome.body.response.allowed, true);
    t.same(outcome.body.response.warnings, [warning]);
    t.same(
      outcome.evaluation.findings.map((f) => f.rule),
      ['unhandled-resource'],
    );
  });
}
