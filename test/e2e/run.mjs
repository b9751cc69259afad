// npm run test:e2e: the end-to-end suite against a real kube-apiserver and etcd. Prints `N passed, N failed`.
// When etcd or the apiserver cannot be found the suite says so in one line and counts as a failure.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findTool } from '../helpers/tools.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tools = [findTool('kube-apiserver'), findTool('snapshot-controller')];
const missing =
  tools.find((t) => t.missing)?.missing ??
  ['etcd', 'xz', 'openssl'].find((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missing) {
  console.log(`e2e skipped: ${missing.includes(' ') ? missing : `${missing} not found on PATH`}`);
  console.log('e2e: 0 passed, 1 failed');
  process.exit(1);
}
if (!existsSync(`${root}dist/bundle/main.js`)) spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
const files =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : [
        'test/e2e/webhook.e2e.ts',
        'test/e2e/faults.e2e.ts',
        'test/e2e/controller.e2e.ts',
        'test/e2e/conversion.e2e.ts',
        'test/e2e/replicas.e2e.ts',
        'test/e2e/audit.e2e.ts',
        'test/e2e/manifests.e2e.ts',
        'test/e2e/mutual-tls.e2e.ts',
      ];
const started = Date.now();
const run = spawnSync('npx', ['tap', '--reporter=tap', '--disable-coverage', '--timeout=300', ...files], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 256 * 1024 * 1024,
});
const output = `${run.stdout}${run.stderr}`;
process.stdout.write(
  output
    .split('\n')
    .filter((l) => /^\s*(not ok|# |ok \d+ - .*\.ts)/.test(l))
    .join('\n') + '\n',
);
const failures = output.split('\n').filter((l) => /^\s*not ok/.test(l));
if (failures.length > 0) process.stdout.write(output.slice(0, 20000));
const summary = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(output);
const pass = summary ? Number(summary[2]) : 0;
const fail = summary ? Number(summary[3] ?? 0) : 1;
console.log(`e2e finished in ${Math.round((Date.now() - started) / 1000)} s`);
console.log(`e2e: ${pass} passed, ${fail + (run.status !== 0 && fail === 0 ? 1 : 0)} failed`);
process.exit(run.status === 0 ? 0 : 1);
