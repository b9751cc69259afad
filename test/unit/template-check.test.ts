// validate's line between a template (rendered before apply) and a manifest whose class parameters hold a driver's
// own interpolation, table-driven over test/fixtures/template-check/cases.yaml.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { separateTemplates, templateAction } from '../../src/cli/template-check.js';

interface Case {
  case: string;
  source: string;
  expect: 'manifest' | 'template';
  path?: string;
  document: Record<string, unknown>;
}

const cases = parse(readFileSync(new URL('../fixtures/template-check/cases.yaml', import.meta.url), 'utf8')) as Case[];

for (const c of cases) {
  t.test(c.case, async (t) => {
    const found = templateAction(c.document);
    if (c.expect === 'manifest') t.equal(found, undefined, `a manifest (${c.source})`);
    else t.equal(found?.path, c.path, `a template at ${c.path} (${c.source})`);
  });
}

t.test('a template becomes a problem naming its path and action; the rest are kept', async (t) => {
  const [manifest, template] = [cases.find((c) => c.expect === 'manifest'), cases.find((c) => c.path === 'metadata.name')];
  if (manifest === undefined || template === undefined)
    throw new Error('cases.yaml lost its first manifest or metadata.name case');
  const out = separateTemplates({
    objects: [
      { file: 'a.yaml', line: 1, object: manifest.document },
      { file: 'a.yaml', line: 9, object: template.document },
    ],
    problems: [{ file: 'b.yaml', line: 3, message: 'YAML syntax error: x', templateMarks: true }],
  });
  t.same(
    out.objects.map((o) => o.line),
    [1],
  );
  t.same(out.problems, [
    {
      file: 'b.yaml',
      line: 3,
      message: 'YAML syntax error: x (the file holds `{{`: a template? render it first, or skip it with --exclude)',
      templateMarks: true,
    },
    {
      file: 'a.yaml',
      line: 9,
      message:
        'a template, not a manifest: metadata.name holds `{{ .VolumeSnapshotNamespace }}`, which is rendered before apply; render it first, or skip it with --exclude',
    },
  ]);
});
