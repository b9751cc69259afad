// The package as a user installs it: packed, installed globally from the tarball into an empty prefix, run from
// there; and docs/cli.md's CI recipe run against it.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import t from 'tap';

const ROOT = resolve('.');
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'sw-package-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
// The installed bin starts with `#!/usr/bin/env node`: the pinned Node first on the PATH, as in npm scripts.
const env = { ...process.env, KUBECONFIG: '', PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };

const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], {
  cwd: ROOT,
  encoding: 'utf8',
  env,
})
  .trim()
  .split('\n')
  .at(-1) as string;
const prefix = join(work, 'prefix');
mkdirSync(prefix);
execFileSync(
  'npm',
  // `npm install -g ./snapshot-webhook-*.tgz`, as docs/cli.md gives it, into an empty global prefix.
  ['install', '-g', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', prefix, join(work, tarball)],
  {
    encoding: 'utf8',
    env,
    stdio: 'pipe',
  },
);
const bin = join(prefix, 'bin/snapshot-webhook');

t.test('installed globally from the tarball, it runs: --version, --help and validate', async (t) => {
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8', env });
  t.equal(v.stdout, `snapshot-webhook ${version}\n`);
  const help = spawnSync(bin, ['--help'], { encoding: 'utf8', env });
  t.equal(help.status, 0);
  t.match(help.stdout, 'snapshot-webhook validate [flags] PATH...');
  const r = spawnSync(bin, ['validate', join(ROOT, 'test/fixtures/cli/mistakes')], { encoding: 'utf8', env });
  t.equal(r.status, 1, 'denials found');
  t.match(r.stdout, '5 checked, 4 denied');
});

/** A stand-in tarball under the real one's name, whose `snapshot-webhook` exits 0 and writes nothing. */
function silentTarball(dir: string): string {
  const pkg = join(work, 'silent');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'snapshot-webhook', version, bin: { 'snapshot-webhook': 'bin.js' } }),
  );
  writeFileSync(join(pkg, 'bin.js'), '#!/usr/bin/env node\n');
  const made = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: pkg, encoding: 'utf8', env });
  return made.trim().split('\n').at(-1) as string;
}

t.test("docs/cli.md's CI recipe: it passes only on a clean, checked input with a report", async (t) => {
  const docs = readFileSync('docs/cli.md', 'utf8');
  const script = /```sh\n(# ci-recipe:[\s\S]*?)```/.exec(docs)?.[1] ?? '';
  t.ok(script.includes(`./${tarball}`), `the recipe installs ${tarball}, the tarball npm pack makes of this version`);
  const cases = [
    { name: 'clean', from: 'clean', status: 0, results: 0 },
    { name: 'denials', from: 'mistakes', status: 1, results: 5 },
    { name: 'a broken file', from: 'broken', status: 2 },
    { name: 'no such folder', from: undefined, status: 2 },
    { name: 'the tarball missing', from: 'clean', status: 2, tool: 'none' },
    { name: 'a tool that writes no report', from: 'clean', status: 2, tool: 'silent' },
  ];
  for (const c of cases) {
    const dir = join(work, `ci-${c.name.replace(/ /g, '-')}`);
    mkdirSync(dir);
    if (c.from !== undefined) cpSync(join(ROOT, 'test/fixtures/cli', c.from), join(dir, 'deploy'), { recursive: true });
    if (c.tool === undefined) cpSync(join(work, tarball), join(dir, tarball));
    if (c.tool === 'silent') t.equal(silentTarball(dir), tarball, 'the stand-in has the same name');
    const run = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', env });
    t.equal(run.status, c.status, `${c.name}: the step exits ${c.status} (${run.stderr.trim().split('\n').at(-1) ?? ''})`);
    if (c.results !== undefined) {
      const sarif = JSON.parse(readFileSync(join(dir, 'snapshot.sarif'), 'utf8')) as { runs: { results: unknown[] }[] };
      t.equal(sarif.runs[0]?.results.length, c.results, `${c.name}: ${c.results} results in the report`);
    }
  }
});
