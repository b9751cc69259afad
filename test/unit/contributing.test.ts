// CONTRIBUTING.md's lists, kept true: every rule id, API version and serve flag is in each place the lists name.
// A failure names the place that was left out.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { reviewAdmission } from '../../src/admission/review.js';
import { RULE_DESCRIPTIONS } from '../../src/cli/rule-descriptions.js';
import { SERVE_FLAGS } from '../../src/config/serve-options.js';
import { RULE_IDS, type RuleId } from '../../src/rules/finding.js';
import { allRoutes } from '../../src/rules/table.js';
import { classSet, FIXTURES, filesUnder, readJson } from '../helpers/fixtures.js';

/**
 * Rules no admission fixture can trigger, with where they are tested instead: each needs a cluster or a reply
 * the fixtures cannot hold.
 */
const NOT_FROM_FIXTURES: Partial<Record<RuleId, string>> = {
  'default-claim-unavailable': 'replicas that cannot agree: test/unit/default-agreement.test.ts',
  'unhandled-resource': 'a resource the configuration never sends: test/unit/unhandled-resource.test.ts',
};

/** Every .ts file under src/, as text. */
function sources(dir = 'src'): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') }));
}

interface Fixture {
  classes: string;
  options?: { preventVolumeModeConversion?: boolean };
  review: unknown;
}

/** The rule ids the admission fixtures trigger. */
async function rulesFromFixtures(): Promise<Set<string>> {
  const seen = new Set<string>();
  for (const file of filesUnder(`${FIXTURES}admission`)) {
    const fixture = readJson<Fixture>(file);
    const outcome = await reviewAdmission(fixture.review, {
      classes: classSet(fixture.classes),
      options: { preventVolumeModeConversion: fixture.options?.preventVolumeModeConversion ?? true },
      modes: { mode: 'enforce', warnRules: new Set() },
    });
    for (const finding of outcome.evaluation.findings) seen.add(finding.rule);
  }
  return seen;
}

t.test('adding a rule: every rule id is in each place CONTRIBUTING.md lists', async (t) => {
  const reporters = sources().filter(
    ({ file }) => !file.endsWith('rules/finding.ts') && !file.endsWith('cli/rule-descriptions.ts'),
  );
  const rules = readFileSync('docs/rules.md', 'utf8');
  const triggered = await rulesFromFixtures();
  for (const id of RULE_IDS) {
    t.ok(
      reporters.some(({ text }) => text.includes(`'${id}'`)),
      `${id}: step 2, a check in src/rules/ that reports it`,
    );
    t.ok(RULE_DESCRIPTIONS[id], `${id}: step 3, a line in src/cli/rule-descriptions.ts`);
    t.ok(rules.includes(`### \`${id}\`\n\n${RULE_DESCRIPTIONS[id]}\n`), `${id}: step 4, its heading in docs/rules.md`);
    t.ok(
      triggered.has(id) || NOT_FROM_FIXTURES[id] !== undefined,
      `${id}: step 5, a case in test/fixtures/make-admission-fixtures.mjs that triggers it`,
    );
  }
  for (const id of Object.keys(NOT_FROM_FIXTURES)) {
    t.notOk(triggered.has(id), `${id} is triggered by a fixture now: take it out of NOT_FROM_FIXTURES`);
  }
});

interface WebhookRules {
  webhooks: { rules: { apiGroups: string[]; apiVersions: string[]; resources: string[] }[] }[];
}

t.test('adding an API version: every route is in each place CONTRIBUTING.md lists', async (t) => {
  const configs = parseAllDocuments(readFileSync('manifests/base/webhooks/validating-webhook-configuration.yaml', 'utf8')).map(
    (d) => d.toJS() as WebhookRules,
  );
  const rules = readFileSync('docs/rules.md', 'utf8');
  for (const { group, version, resource, kind } of allRoutes().values()) {
    const where = `${resource}.${version}.${group}`;
    for (const [i, config] of configs.entries()) {
      t.ok(
        config.webhooks.some((w) =>
          w.rules.some((r) => r.apiGroups.includes(group) && r.apiVersions.includes(version) && r.resources.includes(resource)),
        ),
        `${where}: step 4, apiVersions of webhook configuration ${i + 1} in manifests/base`,
      );
    }
    t.ok(
      filesUnder(`${FIXTURES}admission/${resource}/${version}`).length > 0,
      `${where}: step 6, fixtures under test/fixtures/admission/${resource}/${version}`,
    );
    const row = new RegExp(`^\\| ${kind} \\(([^)]*)\\)`, 'm').exec(rules)?.[1] ?? '';
    t.ok(row.split(', ').includes(version), `${where}: step 7, ${version} in the ${kind} row of docs/rules.md's table`);
  }
});

t.test('adding a flag: every serve flag is in the README table', async (t) => {
  const readme = readFileSync('README.md', 'utf8');
  for (const flag of SERVE_FLAGS.filter((f) => f.ignored !== true && f.name !== 'help')) {
    t.ok(readme.includes(`| \`--${flag.name}\``), `--${flag.name}: step 2, a row of the README's flags table`);
  }
});
