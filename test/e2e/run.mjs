// npm run test:e2e: the end-to-end suite against real kube-apiservers (1.20.2, then 1.31.14 and 1.36.2 where they are
// found) and etcd, the same files against each. Prints `N passed, N failed`.
// 1.20.2 and etcd come from package registries: when they cannot be found the suite says so in one line and counts
// a failure. The current release and the programs some files need are optional: each missing one is a skip line.
// The whole suite runs in a network namespace of its own where only loopback exists (test/helpers/netns.mjs):
// the servers that listen on every interface, as the Deployment's does (`--bind-address` 0.0.0.0 by default), are
// reachable from nothing outside this machine.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { reexecInNetns } from '../helpers/netns.mjs';
import { missingTool } from '../helpers/tools.mjs';

reexecInNetns((why) => {
  console.log(`e2e skipped: ${why}`);
  console.log('e2e: 0 passed, 1 failed');
});

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Kubernetes releases the suite runs against (test/e2e/kube.ts), oldest first; E2E_KUBE=1.36 picks one. */
const releases = process.env.E2E_KUBE ? [process.env.E2E_KUBE] : ['1.20', '1.31', '1.36'];
const label = { '1.20': '1.20.2', 1.31: '1.31.14', 1.36: '1.36.2' };
/**
 * What each release needs to start at all. 1.20.2 and etcd come from package registries: missing, they fail the
 * run. 1.31.14 and 1.36.2 are built by the user (README "The tools folder"): missing, a release is skipped with a line.
 */
const NEEDS = {
  '1.20': { tools: ['kube-apiserver'], commands: ['etcd', 'xz', 'openssl'], optional: false },
  1.31: { tools: ['kube-apiserver-1.31', 'etcd-3.5'], commands: ['xz', 'openssl'], optional: true },
  1.36: { tools: ['kube-apiserver-1.36', 'etcd-3.5'], commands: ['xz', 'openssl'], optional: true },
};
const onPath = (command) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
/** Why a release cannot run here, or undefined. */
function cannotRun(release) {
  const needs = NEEDS[release];
  if (needs === undefined) return `unknown release ${release}`;
  const command = needs.commands.find((c) => !onPath(c));
  return missingTool(...needs.tools) ?? (command === undefined ? undefined : `${command} not found on PATH`);
}
if (!existsSync(`${root}dist/bundle/main.js`)) spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
// Every *.e2e.ts file of this folder, so a new one cannot be left out.
const files =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : readdirSync(`${root}test/e2e`)
        .filter((name) => name.endsWith('.e2e.ts'))
        .sort()
        .map((name) => `test/e2e/${name}`);

/** Runs the files against one release; prints its result lines labelled `[k8s 1.36.2]` and returns its counts. */
function runAgainst(release) {
  const started = Date.now();
  const run = spawnSync('npx', ['tap', '--reporter=tap', '--disable-coverage', '--timeout=300', ...files], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, E2E_KUBE: release },
  });
  const tag = `[k8s ${label[release] ?? release}]`;
  const output = `${run.stdout}${run.stderr}`;
  // E2E_DEBUG: what the test files wrote to stderr (the logs of their webhooks and controllers).
  if (process.env.E2E_DEBUG) process.stderr.write(run.stderr);
  const lines = output.split('\n');
  process.stdout.write(
    lines
      .filter((l) => /^\s*(not ok|# |ok \d+ - .*\.ts)/.test(l))
      .map((l) => `${tag} ${l}`)
      .join('\n') + '\n',
  );
  // Each failing assertion with the diagnostics tap writes under it (the error, its stack, the test's place).
  const failures = lines.flatMap((l, i) => {
    if (!/^\s*not ok/.test(l) || lines[i + 1]?.trim() !== '---') return [];
    const end = lines.findIndex((m, j) => j > i && m.trim() === '...');
    return [lines.slice(i, end < 0 ? i + 40 : Math.min(end + 1, i + 60)).join('\n')];
  });
  if (failures.length > 0) process.stdout.write(`${failures.join('\n').slice(0, 20000)}\n`);
  const summary = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(output);
  const pass = summary ? Number(summary[2]) : 0;
  const fail = (summary ? Number(summary[3] ?? 0) : 1) + (run.status !== 0 && summary && !summary[3] ? 1 : 0);
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`${tag} e2e finished in ${seconds} s: ${pass} passed, ${fail} failed`);
  return { pass, fail, ok: run.status === 0 };
}

/** Runs one release, or says in one line why it cannot: a failure for a release a fresh machine has, else a skip. */
function runOrSkip(release) {
  const why = cannotRun(release);
  if (why === undefined) return runAgainst(release);
  const tag = `[k8s ${label[release] ?? release}]`;
  if (NEEDS[release]?.optional) {
    console.log(`${tag} e2e skipped: ${why}`);
    return { pass: 0, fail: 0, ok: true };
  }
  console.log(`${tag} e2e cannot run: ${why}`);
  return { pass: 0, fail: 1, ok: false };
}

const results = releases.map(runOrSkip);
const pass = results.reduce((n, r) => n + r.pass, 0);
const fail = results.reduce((n, r) => n + r.fail, 0);
console.log(`e2e: ${pass} passed, ${fail} failed`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
