// `npm run build` (src/packaging/build-when-changed.mjs): nothing is rebuilt when no input changed since the last
// build, so that npm start and the other scripts that build first start at once; a changed source is rebuilt. Run
// on a copy of the inputs, so that the suites running beside it keep their dist/.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';

const copy = mkdtempSync(join(tmpdir(), 'sw-build-'));
t.teardown(() => rmSync(copy, { recursive: true, force: true }));
for (const input of ['src', 'schemas', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
  cpSync(input, join(copy, input), { recursive: true });
}
symlinkSync(resolve('node_modules'), join(copy, 'node_modules'));
const bundle = join(copy, 'dist/bundle/main.js');
const build = (): number => {
  const started = performance.now();
  execFileSync(process.execPath, [join(copy, 'src/packaging/build-when-changed.mjs')], { stdio: 'pipe' });
  return performance.now() - started;
};

t.test('unchanged: no rebuild; a source touched: rebuilt', async (t) => {
  // A build newer than every input.
  mkdirSync(join(copy, 'dist/bundle'), { recursive: true });
  writeFileSync(bundle, '// built\n');
  const later = new Date(Date.now() + 60_000);
  utimesSync(bundle, later, later);
  const ms = build();
  t.equal(statSync(bundle).mtimeMs, later.getTime(), 'the bundle is not written again');
  t.ok(ms < 5_000, `and the check took ${Math.round(ms)} ms`);
  const source = join(copy, 'src/config/version.ts');
  const newer = new Date(later.getTime() + 1_000);
  utimesSync(source, newer, newer);
  build();
  t.not(statSync(bundle).mtimeMs, later.getTime(), 'after a source changed, the bundle is built again');
  t.ok(statSync(join(copy, 'dist/main.js')).isFile(), 'type-checked into dist/ first');
});
