import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import { classSet, FIXTURES, filesUnder, fixtureName, readJson } from '../helpers/fixtures.js';

interface AdmissionFixture {
  description: string;
  classes: string;
  options?: { preventVolumeModeConversion?: boolean };
  review: { apiVersion: string; request: { uid: string } };
  expect: { allowed: boolean; message?: string; code?: number; warnings: string[] };
}

const files = filesUnder(`${FIXTURES}admission`);

t.ok(files.length > 250, 'the fixture set covers every kind and version');

for (const file of files) {
  const fixture = readJson<AdmissionFixture>(file);
  t.test(fixtureName(file), async (t) => {
    const outcome = await reviewAdmission(fixture.review, {
      classes: classSet(fixture.classes),
      options: { preventVolumeModeConversion: fixture.options?.preventVolumeModeConversion ?? true },
      modes: { mode: 'enforce', warnRules: new Set() },
    });
    const { response, apiVersion, kind } = outcome.body;
    t.equal(apiVersion, fixture.review.apiVersion, 'answers in the request apiVersion');
    t.equal(kind, 'AdmissionReview');
    t.equal(response.uid, fixture.review.request.uid, 'echoes the uid');
    t.equal(response.allowed, fixture.expect.allowed, fixture.description);
    if (fixture.expect.allowed) {
      t.equal(response.status, undefined, 'an allowed answer has no status');
    } else {
      t.same(response.status, {
        code: fixture.expect.code ?? 400,
        reason: fixture.expect.code === 503 ? 'ServiceUnavailable' : 'BadRequest',
        message: fixture.expect.message,
      });
    }
    t.same(response.warnings ?? [], fixture.expect.warnings, 'warnings');
    for (const w of response.warnings ?? []) t.ok(w.length < 120, `warning under 120 characters: ${w}`);
  });
}
