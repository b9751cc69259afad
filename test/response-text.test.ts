import fc from 'fast-check';
import t from 'tap';
import { respond, responseText } from '../src/admission/respond.js';
import { reviewAdmission } from '../src/admission/review.js';
import { jsonString } from '../src/json/json-string.js';
import type { Decision } from '../src/rules/decide.js';
import { AWKWARD_STRINGS, classSet, FIXTURES, filesUnder, fixtureName, readJson } from './helpers/fixtures.js';

interface AdmissionFixture {
  classes: string;
  review: unknown;
}

const AWKWARD = [...AWKWARD_STRINGS, 'half-\ud83d', '~ok~'];

t.test('jsonString is JSON.stringify for any string', async (t) => {
  for (const text of AWKWARD) t.equal(jsonString(text), JSON.stringify(text), JSON.stringify(text));
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => jsonString(text) === JSON.stringify(text)),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 64 }), (text) => jsonString(text) === JSON.stringify(text)),
    { numRuns: 5000 },
  );
});

t.test('the answer text is JSON.stringify of the answer, on every admission fixture, enforce and warn', async (t) => {
  for (const file of filesUnder(`${FIXTURES}admission`)) {
    const fixture = readJson<AdmissionFixture>(file);
    for (const mode of ['enforce', 'warn'] as const) {
      let outcome;
      try {
        outcome = reviewAdmission(fixture.review, {
          classes: classSet(fixture.classes),
          options: { preventVolumeModeConversion: true },
          modes: { mode, warnRules: new Set() },
        });
      } catch {
        continue; // an envelope refused before any answer exists (HTTP 400): nothing to serialize
      }
      t.equal(responseText(outcome.body), JSON.stringify(outcome.body), `${fixtureName(file)} ${mode}`);
    }
  }
});

t.test('every field that carries text, with strings that need escaping', async (t) => {
  for (const text of AWKWARD) {
    const denial: Decision = {
      allowed: false,
      denial: { rule: 'source-exactly-one', message: text, code: 400 },
      warnings: [text, `also: ${text}`],
      softened: false,
    } as Decision;
    for (const decision of [
      denial,
      { ...denial, allowed: true, warnings: [] },
      { ...denial, denial: { ...denial.denial!, code: 500 } },
    ]) {
      const body = respond(`admission.k8s.io/${text}`, text, decision);
      t.equal(responseText(body), JSON.stringify(body), JSON.stringify(text));
    }
  }
});
