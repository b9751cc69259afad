import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import t from 'tap';
import { NO_CLASSES_WARNINGS } from '../../src/cli/review-command.js';
import { RULE_DESCRIPTIONS } from '../../src/cli/rule-descriptions.js';
import { MAX_MANIFEST_BYTES } from '../../src/manifests/manifest-files.js';
import { RULE_IDS } from '../../src/rules/finding.js';
import { runCli } from '../helpers/cli.js';

const DIR = 'test/fixtures/cli';

t.test('a clean folder: exit 0, objects of other kinds skipped and counted', async (t) => {
  const r = runCli(['validate', `${DIR}/clean`]);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, '4 checked, 0 denied, 0 warnings, 1 skipped (not snapshot kinds), 0 unreadable\n');
});

t.test('each kind of mistake: one line per finding, file:line: Kind ns/name: message', async (t) => {
  const r = runCli(['validate', `${DIR}/mistakes`]);
  t.equal(r.status, 1);
  t.same(r.stdout.trimEnd().split('\n'), [
    `${DIR}/mistakes/mistakes.yaml:2: VolumeSnapshot apps/both-sources: only one of Spec.Source.PersistentVolumeClaimName = db-data and Spec.Source.VolumeSnapshotContentName = some-content should be set`,
    `${DIR}/mistakes/mistakes.yaml:12: VolumeSnapshot apps/empty-class: Spec.VolumeSnapshotClassName must not be the empty string`,
    `${DIR}/mistakes/mistakes.yaml:22: VolumeSnapshotContent no-ref: both Spec.VolumeSnapshotRef.Name = <unset> and Spec.VolumeSnapshotRef.Namespace = <unset> must be set`,
    `${DIR}/mistakes/mistakes.yaml:32: VolumeGroupSnapshot apps/no-source: one of Spec.Source.Selector and Spec.Source.VolumeGroupSnapshotContentName should be set`,
    `${DIR}/mistakes/mistakes.yaml:40: VolumeSnapshotClass almost-default: warning: is-default-class is "True", not "true": this VolumeSnapshotClass is NOT a default`,
    '5 checked, 4 denied, 1 warning, 0 skipped (not snapshot kinds), 0 unreadable',
  ]);
});

t.test('a double default split across two files names both', async (t) => {
  const r = runCli(['validate', `${DIR}/double-default`]);
  t.equal(r.status, 1);
  t.match(
    r.stdout,
    `${DIR}/double-default/b.yaml:2: VolumeSnapshotClass slow: default snapshot class: fast already exists for driver: ebs.csi.aws.com; to move the default, first remove it from fast: kubectl annotate volumesnapshotclasses fast snapshot.storage.kubernetes.io/is-default-class- (defined at ${DIR}/double-default/a.yaml:1)`,
  );
});

t.test('the PATHs of one run are one set: a class in one folder is the class a snapshot in another names', async (t) => {
  const together = runCli(['validate', `${DIR}/two-folders/apps`, `${DIR}/two-folders/classes`]);
  t.equal(together.stdout, '2 checked, 0 denied, 0 warnings, 0 skipped (not snapshot kinds), 0 unreadable\n');
  const alone = runCli(['validate', `${DIR}/two-folders/apps`]);
  t.match(alone.stdout, 'warning: VolumeSnapshotClass nightly does not exist (yet)', 'alone, the class is not there');
  const defaults = runCli(['validate', `${DIR}/two-folders/classes`, `${DIR}/double-default`]);
  t.equal(defaults.status, 1, 'defaults for one driver in two folders are denied');
  t.match(
    defaults.stdout,
    /a\.yaml:1: VolumeSnapshotClass fast: default snapshot class: nightly already exists for driver: ebs\.csi\.aws\.com/,
  );
});

t.test('a snapshot naming a class that this input denies is told so, not "does not exist"', async (t) => {
  const r = runCli(['validate', `${DIR}/denied-class`]);
  t.equal(r.status, 1);
  t.same(r.stdout.trimEnd().split('\n'), [
    `${DIR}/denied-class/classes.yaml:10: VolumeSnapshotClass slow: default snapshot class: fast already exists for driver: ebs.csi.aws.com; to move the default, first remove it from fast: kubectl annotate volumesnapshotclasses fast snapshot.storage.kubernetes.io/is-default-class- (defined at ${DIR}/denied-class/classes.yaml:1)`,
    `${DIR}/denied-class/snapshots.yaml:1: VolumeSnapshot apps/on-slow: warning: VolumeSnapshotClass slow is in this input but would be denied (${DIR}/denied-class/classes.yaml:10); the snapshot waits until it exists`,
    `${DIR}/denied-class/snapshots.yaml:11: VolumeSnapshot apps/on-nothing: warning: VolumeSnapshotClass absent does not exist (yet); the snapshot waits until it does`,
    '4 checked, 1 denied, 2 warnings, 0 skipped (not snapshot kinds), 0 unreadable',
  ]);
});

t.test('moving a default in one file: the order kubectl applies decides, and validate says so', async (t) => {
  const at = `${DIR}/move-default`;
  const wrong = runCli(['validate', '--classes-from', `${at}/cluster.yaml`, `${at}/fast-first.yaml`]);
  t.equal(wrong.status, 1, 'fast first: fast is denied while slow is still the default');
  t.match(
    wrong.stdout,
    `${at}/fast-first.yaml:2: VolumeSnapshotClass fast: default snapshot class: slow already exists for driver: hostpath.csi.k8s.io; ` +
      'to move the default, first remove it from slow: kubectl annotate volumesnapshotclasses slow snapshot.storage.kubernetes.io/is-default-class-; ' +
      `this input removes that default later (${at}/fast-first.yaml:11), and kubectl applies in order: as written, this class is ` +
      `denied and the driver is left with no default. Put ${at}/fast-first.yaml:11 before this document, or apply it first`,
  );
  const right = runCli(['validate', '--classes-from', `${at}/cluster.yaml`, `${at}/slow-first.yaml`]);
  t.equal(right.status, 0, `slow first: both admitted in order\n${right.stdout}`);
  const alone = runCli([
    'validate',
    '--classes-from',
    'test/fixtures/class-sets/double-default.yaml',
    `${DIR}/double-default/a.yaml`,
  ]);
  t.notMatch(alone.stdout, 'removes that default later', 'no such hint when the input does not remove the default');
});

t.test('a default that clashes with an existing class (--classes-from)', async (t) => {
  const r = runCli([
    'validate',
    '--classes-from',
    'test/fixtures/class-sets/double-default.yaml',
    `${DIR}/double-default/a.yaml`,
  ]);
  t.equal(r.status, 1);
  t.match(
    r.stdout,
    'a.yaml:1: VolumeSnapshotClass fast: default snapshot class: fast-a already exists for driver: ebs.csi.aws.com; to move the default, first remove it from fast-a: kubectl annotate volumesnapshotclasses fast-a snapshot.storage.kubernetes.io/is-default-class-\n',
  );
});

t.test('a broken YAML file next to a good one: named with its line, the other still checked, exit 2', async (t) => {
  const r = runCli(['validate', `${DIR}/broken`]);
  t.equal(r.status, 2);
  const lines = r.stdout.trimEnd().split('\n');
  t.match(lines[0], new RegExp(`^${DIR}/broken/bad.yaml:8: YAML syntax error: `));
  t.equal(
    lines[1],
    `${DIR}/broken/good.yaml:1: VolumeSnapshot apps/fine: Spec.Source.VolumeSnapshotContentName must not be the empty string`,
  );
  t.equal(lines[2], '1 checked, 1 denied, 0 warnings, 0 skipped (not snapshot kinds), 1 unreadable');
});

t.test('a Helm chart: its templates are unreadable until rendered, and --exclude skips them', async (t) => {
  const plain = runCli(['validate', `${DIR}/helm-chart`]);
  t.equal(plain.status, 2, 'a template is not a manifest: exit 2');
  t.match(
    plain.stdout,
    /templates\/snapshot\.yaml:\d+: YAML syntax error: .*a template\? render it first, or skip it with --exclude/,
    'unquoted actions: not YAML',
  );
  t.match(
    plain.stdout,
    /templates\/class\.yaml:2: a template, not a manifest: metadata\.name holds `\{\{ \.Release\.Name \}\}`, which is rendered before apply; render it first, or skip it with --exclude/,
    'quoted actions: YAML, but still a template',
  );
  t.match(plain.stdout, /^1 checked, 0 denied, 0 warnings, 2 skipped \(not snapshot kinds\), 2 unreadable$/m);
  const alertText = runCli(['validate', 'manifests/components/monitoring']);
  t.equal(alertText.status, 0, "a PrometheusRule's own {{ }} is not ours to judge: skipped, not a template");
  const skipped = runCli(['validate', '--exclude', '**/templates', `${DIR}/helm-chart`]);
  t.equal(skipped.status, 0, skipped.stdout);
  t.equal(
    skipped.stdout,
    '1 checked, 0 denied, 0 warnings, 2 skipped (not snapshot kinds), 0 unreadable\n',
    'Chart.yaml and values.yaml skipped, snapshot.yaml checked',
  );
  const both = runCli(['validate', '--exclude=**/Chart.yaml', '--exclude', '**/templates/*.yaml', `${DIR}/helm-chart`]);
  t.equal(
    both.stdout,
    '1 checked, 0 denied, 0 warnings, 1 skipped (not snapshot kinds), 0 unreadable\n',
    'repeated: both globs apply',
  );
});

t.test('--old checks each object as an UPDATE of its namesake', async (t) => {
  const r = runCli(['validate', '--old', `${DIR}/update/old`, `${DIR}/update/new`]);
  t.equal(r.status, 1);
  t.same(r.stdout.trimEnd().split('\n'), [
    `${DIR}/update/new/content.yaml:1: VolumeSnapshotContent bound: Spec.Source.VolumeHandle is immutable but was changed from vol-1 to vol-2`,
    `${DIR}/update/new/content.yaml:1: VolumeSnapshotContent bound: Spec.SourceVolumeMode is immutable but was changed from Filesystem to Block`,
    '2 checked, 1 denied, 0 warnings, 0 skipped (not snapshot kinds), 0 unreadable',
  ]);
});

t.test('JSON output has the documented shape', async (t) => {
  const r = runCli(['validate', '--output', 'json', `${DIR}/mistakes`, `${DIR}/clean`]);
  t.equal(r.status, 1);
  const report = JSON.parse(r.stdout) as {
    version: number;
    findings: Record<string, unknown>[];
    summary: Record<string, number>;
  };
  t.equal(report.version, 1);
  t.same(report.summary, { checked: 9, denied: 4, warnings: 1, skipped: 1, unreadable: 0 });
  t.same(report.findings[0], {
    file: `${DIR}/mistakes/mistakes.yaml`,
    line: 2,
    kind: 'VolumeSnapshot',
    namespace: 'apps',
    name: 'both-sources',
    severity: 'error',
    rule: 'source-exactly-one',
    message:
      'only one of Spec.Source.PersistentVolumeClaimName = db-data and Spec.Source.VolumeSnapshotContentName = some-content should be set',
  });
});

/** SARIF 2.1.0's own JSON schema (draft-04; its keywords mean the same to Ajv's draft-07 here). */
function sarifSchemaValidator(): ValidateFunction {
  const schema = JSON.parse(
    readFileSync('node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json', 'utf8'),
  ) as Record<string, unknown>;
  delete schema.$schema;
  delete schema.id;
  // The schema's language pattern is not valid as a Unicode regular expression, which Ajv uses by default.
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  formats.default(ajv);
  return ajv.compile(schema);
}

t.test('SARIF output validates against the SARIF 2.1.0 schema, with the version and described rules', async (t) => {
  const validate = sarifSchemaValidator();
  for (const input of ['mistakes', 'double-default', 'unknown', 'broken']) {
    const out = runCli(['validate', '-o', 'sarif', `${DIR}/${input}`]);
    const doc = JSON.parse(out.stdout) as { runs: { tool: { driver: Record<string, unknown> } }[] };
    t.ok(validate(doc), `${input}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    const driver = doc.runs[0]?.tool.driver as { version: string; rules: { id: string; shortDescription: { text: string } }[] };
    t.equal(driver.version, JSON.parse(readFileSync('package.json', 'utf8')).version, 'the tool version');
    t.ok(driver.rules.length > 0 && driver.rules.every((rule) => rule.shortDescription.text.length > 0), 'rules described');
  }
});

t.test('docs/rules.md has a heading per rule id with its description', async (t) => {
  const docs = readFileSync('docs/rules.md', 'utf8');
  for (const [id, text] of Object.entries(RULE_DESCRIPTIONS)) t.ok(docs.includes(`### \`${id}\`\n\n${text}\n`), id);
  t.same(Object.keys(RULE_DESCRIPTIONS).slice(0, RULE_IDS.length).sort(), [...RULE_IDS].sort(), 'every rule id');
});

t.test('SARIF output for code scanning', async (t) => {
  const r = runCli(['validate', '--output=sarif', `${DIR}/double-default`]);
  const sarif = JSON.parse(r.stdout) as { version: string; runs: { results: { ruleId: string; locations: unknown[] }[] }[] };
  t.equal(sarif.version, '2.1.0');
  t.match(sarif.runs[0]?.results[0], {
    ruleId: 'default-class-unique',
    level: 'error',
    locations: [{ physicalLocation: { artifactLocation: { uri: `${DIR}/double-default/b.yaml` }, region: { startLine: 2 } } }],
  });
});

t.test('stdin with -', async (t) => {
  const r = runCli(
    ['validate', '-'],
    'apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata: {name: s, namespace: n}\nspec: {source: {}}\n',
  );
  t.equal(r.status, 1);
  t.match(r.stdout, '<stdin>:1: VolumeSnapshot n/s: one of Spec.Source.PersistentVolumeClaimName');
});

t.test('usage errors: one line, exit 2', async (t) => {
  const cases: [string[], string][] = [
    [
      ['validate'],
      'snapshot-webhook: no PATH given. Usage: snapshot-webhook validate [flags] PATH... (files, folders, or - for stdin)\n',
    ],
    [['validate', '--output=xml', 'x'], 'snapshot-webhook: flag (--output): expected one of text, json, sarif, got "xml"\n'],
    [['validate', '--nope', 'x'], 'snapshot-webhook: unknown flag --nope; see --help\n'],
    [
      ['frobnicate'],
      'snapshot-webhook: unknown command "frobnicate"; one of serve, validate, audit, check, explain, review, certs, policy, migrate-storage, help\n',
    ],
    [['serve', '--port=99999'], 'snapshot-webhook: flag (--port): expected a whole number between 0 and 65535, got "99999"\n'],
    [['serve'], 'snapshot-webhook: --tls-cert-file is required (or set SNAPSHOT_WEBHOOK_TLS_CERT_FILE)\n'],
  ];
  for (const [args, stderr] of cases) {
    const r = runCli(args);
    t.equal(r.status, 2, args.join(' '));
    t.equal(r.stderr, stderr);
  }
  const missing = runCli(['validate', 'no/such/path']);
  t.equal(missing.status, 2, 'an unreadable path is exit 2');
  t.match(missing.stdout, /^no\/such\/path: cannot read: ENOENT/);
});

t.test('review prints the answer the server would give', async (t) => {
  const r = runCli(['review', '--classes-from', 'test/fixtures/classes', 'test/fixtures/samples/second-default-class.json']);
  t.equal(r.status, 1, 'exit 1 for a denial');
  t.match(JSON.parse(r.stdout), {
    apiVersion: 'admission.k8s.io/v1',
    response: {
      allowed: false,
      status: { message: 'default snapshot class: csi-hostpath-snapclass already exists for driver: hostpath.csi.k8s.io' },
    },
  });
  t.equal(r.stderr, '', 'with classes: no warning');
  const noClasses = runCli(['review', 'test/fixtures/samples/second-default-class.json']);
  t.equal(noClasses.status, 0, 'no classes: the second default is allowed');
  t.equal(noClasses.stderr, `${NO_CLASSES_WARNINGS.classes}\n`, 'and the warning says the rule was not checked');
  const reviewOf = (fixture: string): string =>
    JSON.stringify(
      (JSON.parse(readFileSync(`test/fixtures/admission/volumesnapshots/v1/${fixture}.json`, 'utf8')) as { review: unknown })
        .review,
    );
  const namesClass = runCli(['review', '-'], reviewOf('create-pvc-source'));
  t.equal(
    namesClass.stderr,
    `${NO_CLASSES_WARNINGS.named}\n`,
    'a snapshot naming a class: only that class is said to be missing',
  );
  const namesNone = runCli(['review', '-'], reviewOf('create-no-class-uses-default'));
  t.equal(namesNone.stderr, '', 'a snapshot naming no class: no warning, the default-class rule is not for snapshots');
  const bad = runCli(['review', '-'], '{"kind":"AdmissionReview"}');
  t.equal(bad.status, 2);
  t.equal(bad.stderr, "snapshot-webhook: -: malformed AdmissionReview: (root) must have required property 'apiVersion'\n");
});

t.test('help', async (t) => {
  const r = runCli(['help']);
  t.equal(r.status, 0);
  t.match(r.stdout, 'snapshot-webhook validate [flags] PATH...');
  const serve = runCli(['serve', '--help']);
  t.match(serve.stdout, '--tls-cert-file [$SNAPSHOT_WEBHOOK_TLS_CERT_FILE]');
});

t.test('--kubeconfig that cannot be reached: exit 2 with the reason', async (t) => {
  const r = runCli(['validate', '--kubeconfig', 'test/fixtures/cli/unreachable-kubeconfig.yaml', `${DIR}/clean`]);
  t.equal(r.status, 2);
  t.match(
    r.stderr,
    /^snapshot-webhook: cluster of test\/fixtures\/cli\/unreachable-kubeconfig.yaml: cannot read the existing classes: .*ECONNREFUSED/,
  );
});

t.test("a kubeconfig with the legacy oidc auth-provider: client-node's own error, exit 2 (docs/cli.md)", async (t) => {
  const r = runCli(['audit', '--kubeconfig', 'test/fixtures/cli/oidc-kubeconfig.yaml']);
  t.equal(r.status, 2);
  const lines = r.stdout.trimEnd().split('\n');
  t.equal(lines.length, 3, r.stdout);
  for (const line of lines.slice(0, 2))
    t.match(line, /: cannot read which versions of \S+ the cluster serves: "server" must be an instance of URL$/);
});

t.test('--kustomize renders the folder with kubectl and checks the result', async (t) => {
  const r = runCli(['validate', '--kustomize', `${DIR}/kustomize`]);
  t.equal(r.status, 1);
  t.same(r.stdout.trimEnd().split('\n'), [
    `${DIR}/kustomize/kustomization.yaml: VolumeSnapshot apps/nightly: only one of Spec.Source.PersistentVolumeClaimName = data and Spec.Source.VolumeSnapshotContentName = also-set should be set`,
    '1 checked, 1 denied, 0 warnings, 0 skipped (not snapshot kinds), 0 unreadable',
  ]);
  const traced = runCli(['validate', '--kustomize', `${DIR}/kustomize-origin`]);
  t.equal(traced.status, 1);
  t.match(
    traced.stdout,
    `${DIR}/kustomize-origin/snapshots.yaml:1: VolumeSnapshot apps/nightly: only one of`,
    'with originAnnotations, the source file and line',
  );
});

t.test('a kind or version of our groups this webhook does not know: reported with a "did you mean", exit 2', async (t) => {
  const r = runCli(['validate', `${DIR}/unknown`]);
  t.equal(r.status, 2);
  t.same(r.stdout.trimEnd().split('\n'), [
    `${DIR}/unknown/typos.yaml:2: VolumeSnapshots apps/typo: VolumeSnapshots is not a kind of snapshot.storage.k8s.io; did you mean VolumeSnapshot?`,
    `${DIR}/unknown/typos.yaml:7: VolumeSnapshot apps/future: snapshot.storage.k8s.io/v2 is not a version of VolumeSnapshot this webhook knows; did you mean snapshot.storage.k8s.io/v1?`,
    `${DIR}/unknown/typos.yaml:12: VolumeGroupSnapshotClas group-typo: VolumeGroupSnapshotClas is not a kind of groupsnapshot.storage.k8s.io; did you mean VolumeGroupSnapshotClass?`,
    '0 checked, 0 denied, 0 warnings, 1 skipped (not snapshot kinds), 3 unreadable',
  ]);
  const skipped = runCli(['validate', '--skip-unknown', `${DIR}/unknown`]);
  t.equal(skipped.status, 0, '--skip-unknown skips them');
  t.equal(skipped.stdout, '0 checked, 0 denied, 0 warnings, 4 skipped (not snapshot kinds), 0 unreadable\n');
});

t.test('-o is --output; --cluster reads the classes of $KUBECONFIG', async (t) => {
  const json = runCli(['validate', '-o', 'json', `${DIR}/clean`]);
  t.equal(json.status, 0);
  t.match(JSON.parse(json.stdout), { version: 1, summary: { checked: 4 } });
  const r = runCli(['validate', '--cluster', `${DIR}/clean`], undefined, {
    KUBECONFIG: 'test/fixtures/cli/unreachable-kubeconfig.yaml',
  });
  t.equal(r.status, 2);
  t.match(r.stderr, /^snapshot-webhook: cluster of test\/fixtures\/cli\/unreachable-kubeconfig.yaml: cannot read/);
  const offline = runCli(['validate', `${DIR}/clean`], undefined, {
    KUBECONFIG: 'test/fixtures/cli/unreachable-kubeconfig.yaml',
  });
  t.equal(offline.status, 0, 'without --cluster, validate stays offline whatever $KUBECONFIG says');
});

t.test('docs/cli.md lists exactly the validate flags, with their short forms', async (t) => {
  const docs = readFileSync('docs/cli.md', 'utf8');
  const section = docs.slice(docs.indexOf('## `snapshot-webhook validate'), docs.indexOf('### Text output'));
  const rows = [...section.matchAll(/^\| (?:`-([a-z])`, )?`--([a-z-]+)[^`]*` +\|/gm)];
  const help = runCli(['validate', '--help']).stdout;
  const flags = [...help.matchAll(/^ {2}(?:-([a-z]), )?--([a-z-]+)/gm)].filter((m) => m[2] !== 'help');
  t.same(rows.map((m) => [m[1], m[2]]).sort(), flags.map((m) => [m[1], m[2]]).sort());
});

t.test('a file over the size bound is reported, not read, and the others are still checked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sw-large-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const big = join(dir, 'big.yaml');
  writeFileSync(big, '');
  truncateSync(big, MAX_MANIFEST_BYTES + 1); // sparse: nothing is written or read
  const r = runCli(['validate', big, `${DIR}/clean`]);
  t.equal(r.status, 2);
  t.match(r.stdout, `${big}: too large: over 64 MiB`);
  t.match(r.stdout, '4 checked, 0 denied');
});
