// From a rule to its test: test/fixtures/rule-ids.yaml names, for every rule id, the admission fixtures whose decision
// must carry it (run here: removing the rule fails them), or the test that asserts it where no fixture can.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { reviewAdmission } from '../../src/admission/review.js';
import { RULE_IDS } from '../../src/rules/finding.js';
import { classSet, FIXTURES, readJson } from '../helpers/fixtures.js';

type Entry = { readonly fixtures: readonly string[] } | { readonly test: string };
const table = parse(readFileSync(`${FIXTURES}rule-ids.yaml`, 'utf8')) as Record<string, Entry>;

interface Fixture {
  classes: string;
  options?: { preventVolumeModeConversion?: boolean };
  review: unknown;
}

t.test('the table names every rule id, and only those', async (t) => {
  t.same(Object.keys(table).sort(), [...RULE_IDS].sort());
});

for (const [rule, entry] of Object.entries(table))
  t.test(rule, async (t) => {
    if ('test' in entry) {
      t.match(readFileSync(entry.test, 'utf8'), `'${rule}'`, `${entry.test} asserts the rule id`);
      return;
    }
    t.ok(entry.fixtures.length > 0, 'at least one fixture');
    for (const file of entry.fixtures) {
      const fixture = readJson<Fixture>(`${FIXTURES}admission/${file}`);
      const outcome = await reviewAdmission(fixture.review, {
        classes: classSet(fixture.classes),
        options: { preventVolumeModeConversion: fixture.options?.preventVolumeModeConversion ?? true },
        modes: { mode: 'enforce', warnRules: new Set() },
      });
      t.ok(
        outcome.evaluation.findings.some((f) => f.rule === rule),
        `${file}: ${outcome.evaluation.findings.map((f) => f.rule).join(', ') || 'no finding'}`,
      );
    }
  });
