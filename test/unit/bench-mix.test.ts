// The bench's request mix (test/bench/mix.mjs) decides as each entry says against the bench's classes: the
// captured reviews still match the fixture classes' names, and each changed one is denied for its own reason.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import { loadStaticClasses } from '../../src/classes/static-classes.js';
import { classManifests, mixEntries, requestMix } from '../bench/mix.mjs';
import { reviewDeps } from '../helpers/review-deps.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-mix-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const classes = join(dir, 'classes.yaml');
writeFileSync(classes, classManifests());

/** Why each denied entry is denied: the rule its change breaks. */
const DENIED_BY: Record<string, RegExp> = {
  'class create, a second default (denied)': /default snapshot class: csi-hostpath-snapclass already exists/,
  'snapshot create with both sources (denied)':
    /only one of Spec.Source.PersistentVolumeClaimName = data and Spec.Source.VolumeSnapshotContentName = restored-content/,
  "content update changing the source's volume handle (denied)":
    /Spec\.Source\.VolumeHandle is immutable but was changed from vol-data to vol-other/,
};

const entries = mixEntries();
t.equal(
  entries.reduce((sum, e) => sum + e.weight, 0),
  100,
  'the weights add up to 100',
);
t.equal(requestMix().length, 100, 'the mix is 100 bodies');

for (const entry of entries) {
  t.test(entry.name, async (t) => {
    const { request } = entry.review;
    t.match(request.uid, /^[0-9a-f-]{36}$/, 'the uid is the apiserver’s');
    t.ok(request.requestKind !== undefined && request.userInfo?.groups !== undefined, 'as the apiserver sent it');
    const outcome = await reviewAdmission(entry.review, reviewDeps('cluster', { classes: loadStaticClasses(classes) }));
    t.equal(outcome.body.response.allowed, entry.allowed, entry.allowed ? 'allowed' : 'denied');
    const denial = DENIED_BY[entry.name];
    if (denial !== undefined) t.match(outcome.body.response.status?.message, denial);
    else t.equal(entry.allowed, true, 'every denied entry names its rule');
  });
}
