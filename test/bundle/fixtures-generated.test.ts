// The committed admission fixtures are what test/fixtures/make-admission-fixtures.mjs writes: a fixture edited by
// hand, or a case added to the generator without running it, fails here, naming the file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

const COMMITTED = 'test/fixtures/admission';
const fresh = mkdtempSync(join(tmpdir(), 'sw-fixtures-'));
t.teardown(() => rmSync(fresh, { recursive: true, force: true }));
execFileSync(process.execPath, ['test/fixtures/make-admission-fixtures.mjs', fresh]);

const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .sort();

t.test('the same files', async (t) => {
  t.same(files(COMMITTED), files(fresh));
});

t.test('each file as the generator writes it', async (t) => {
  for (const file of files(fresh))
    t.equal(readFileSync(join(COMMITTED, file), 'utf8'), readFileSync(join(fresh, file), 'utf8'), file);
});
