// The bench's request mixes (test/bench/mix.mjs) decide as each entry says against the bench's classes: the
// captured reviews still match the fixture classes' names, and each changed one is denied for its own reason. The
// `matched` mix leaves out exactly what 1.36's apiserver did not send: its capture holds none of those reviews.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import { loadStaticClasses } from '../../src/classes/static-classes.js';
import { classManifests, entriesLeftOut, MIXES, mixEntries, requestMix, type MixName } from '../bench/mix.mjs';
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

const everyWrite = mixEntries('every-write');
t.equal(
  everyWrite.reduce((sum, e) => sum + e.weight, 0),
  100,
  'the weights of every-write add up to 100',
);
t.equal(requestMix().length, 100, 'every-write is 100 bodies');
const matched = mixEntries('matched');
t.equal(
  requestMix('matched').length,
  matched.reduce((sum, e) => sum + e.weight, 0),
  'matched is a body for each of its weights',
);
t.same(
  matched.map((e) => [e.name, e.weight, e.allowed]),
  everyWrite.filter((e) => matched.some((m) => m.name === e.name)).map((e) => [e.name, e.weight, e.allowed]),
  'matched keeps the entries of every-write with their weights',
);

t.test('1.36 sent none of the reviews the matched mix leaves out', async (t) => {
  const { reviews } = JSON.parse(readFileSync(MIXES.matched.capture, 'utf8')) as { reviews: unknown[] };
  for (const left of entriesLeftOut()) {
    // A changed review is a write the CRDs' CEL rules reject on 1.36 before any webhook: its original was allowed.
    if (left.changed) continue;
    t.notOk(reviews.some(left.isReview), `${left.name}: not in the 1.36 capture`);
  }
  t.ok(reviews.length > 0, 'the capture holds reviews');
});

const mixes: [MixName, typeof everyWrite][] = [
  ['every-write', everyWrite],
  ['matched', matched],
];
for (const [mix, entries] of mixes) {
  for (const entry of entries) {
    t.test(`${mix}: ${entry.name}`, async (t) => {
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
}
