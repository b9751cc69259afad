import t from 'tap';
import { manifestFiles } from '../src/manifests/manifest-files.js';
import { parseManifests } from '../src/manifests/read-manifests.js';
import { parseManifestsFast } from '../src/manifests/read-manifests-fast.js';
import { readFileSync } from 'node:fs';
import { FIXTURES } from './helpers/fixtures.js';

// The server reads --classes-from with js-yaml, the CLI with `yaml`: both must see the same objects.
const files = ['cli', 'classes', 'class-sets'].flatMap((dir) => manifestFiles(`${FIXTURES}${dir}`));

for (const file of files) {
  t.test(file.slice(FIXTURES.length), async (t) => {
    const text = readFileSync(file, 'utf8');
    const exact = parseManifests(file, text);
    const fast = parseManifestsFast(file, text);
    t.same(
      fast.objects.map((o) => o.object),
      exact.objects.map((o) => o.object),
      'the same objects, in order',
    );
    t.equal(fast.problems.length, exact.problems.length, 'the same number of problems');
    // List items carry their document's line in the fast reader; every other object its own.
    if (!text.includes('List')) {
      t.same(
        fast.objects.map((o) => o.line),
        exact.objects.map((o) => o.line),
        'each document at the same line',
      );
    }
  });
}

const cases: { name: string; text: string; objects: unknown[]; problems: { line: number; message: RegExp }[] }[] = [
  {
    name: 'documents split at --- and ..., content on the marker line, comments and empty documents',
    text: '# head\n---\na: 1\n...\n--- {b: 2}\n---\n# nothing\n---\n\nc: 2024-01-01\n',
    objects: [{ a: 1 }, { b: 2 }, { c: '2024-01-01' }],
    problems: [],
  },
  {
    name: 'a syntax error is a problem at its line; the other documents are read',
    text: 'a: 1\n---\nb: [1,\n---\nc: 3\n',
    objects: [{ a: 1 }, { c: 3 }],
    problems: [{ line: 4, message: /^YAML syntax error: / }],
  },
  {
    name: 'a scalar or a sequence is not an object',
    text: '--- just text\n---\n- 1\n',
    objects: [],
    problems: [
      { line: 1, message: /must be a Kubernetes object/ },
      { line: 3, message: /must be a Kubernetes object/ },
    ],
  },
  {
    name: 'duplicate keys: the last wins, as with the yaml parser',
    text: 'a: 1\na: 2\n',
    objects: [{ a: 2 }],
    problems: [],
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const found = parseManifestsFast('f.yaml', c.text);
    t.same(
      found.objects.map((o) => o.object),
      c.objects,
    );
    t.equal(found.problems.length, c.problems.length);
    c.problems.forEach((p, i) => {
      t.equal(found.problems[i]?.line, p.line, `problem ${i} line`);
      t.match(found.problems[i]?.message, p.message);
    });
  });
}
