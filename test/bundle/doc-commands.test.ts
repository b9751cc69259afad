// Every shell block of README.md and docs/ works when pasted. Each block is listed here by its file and first
// command line: run here (those that need no cluster, in a scratch folder or the checkout, with `snapshot-webhook`
// on the PATH as `npm install -g` puts it), or named with the test that runs it (the end-to-end suite for the
// cluster ones) or with why it is not run. A block that is not listed, or a listed block that is gone, fails.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import t from 'tap';

interface Block {
  readonly file: string;
  readonly first: string;
  readonly text: string;
}

/** How a block is kept true: run here with its expected exit status (and output), or where else, or why not. */
type Check =
  | { readonly run: 'checkout' | 'scratch'; readonly status: number; readonly stdout?: RegExp }
  | { readonly runBy: string }
  | { readonly notRun: string };

const CHECKS: Record<string, Check> = {
  'README.md: npm install && npm start': { runBy: '.ci/run (npm ci, npm test) and test/bundle/npm-start.test.ts (npm start)' },
  'README.md: curl --cacert certs/dev/ca.crt': { runBy: 'this file: "the README curl against npm start"' },
  'docs/cli.md: npm pack && npm install -g ./snapshot-webhook-*.tgz': {
    runBy: 'test/bundle/package.test.ts (packs, installs with -g into an empty prefix, runs --help and validate)',
  },
  'docs/cli.md: # ci-recipe': { runBy: 'test/bundle/package.test.ts ("docs/cli.md\'s CI recipe")' },
  'docs/cli.md: kubectl get volumesnapshotclasses,volumegroupsnapshotclasses -o yaml': {
    notRun: 'needs a cluster and a deploy/ folder of the reader; --classes-from is tested by test/bundle/cli-validate.test.ts',
  },
  'docs/cli.md: git worktree add /tmp/before origin/main': {
    notRun: "needs the reader's repository and remote; --old is tested by test/bundle/cli-validate.test.ts",
  },
  'docs/cli.md: snapshot-webhook validate --kustomize /etc/microshift/manifests': {
    notRun: 'paths on a MicroShift device; the same command on the rendered overlay runs here (docs/microshift.md)',
  },
  'docs/cli.md: snapshot-webhook review --classes-from test/fixtures/classes': {
    run: 'checkout',
    status: 1,
    stdout:
      /"message": "default snapshot class: csi-hostpath-snapclass already exists for driver: hostpath\.csi\.k8s\.io; to move the default/,
  },
  'docs/cli.md: snapshot-webhook check --wait 2m': {
    runBy: 'test/e2e/check.e2e.ts runs check with --wait against the real apiserver, with each cause and live',
  },
  'docs/cli.md: snapshot-webhook explain -n apps volumesnapshot/data-snap': {
    runBy:
      "test/e2e/explain.e2e.ts runs explain against the real apiserver and snapshot-controller, each cause made for real; test/unit/explain.test.ts checks the page's example output",
  },
  'docs/cli.md: snapshot-webhook policy --group-snapshots | kubectl apply -f -': {
    runBy: 'test/e2e/policy.e2e.ts applies the same policy (manifests/overlays/policy-only is this output) to 1.36.2',
  },
  'docs/operations.md: kubectl annotate volumesnapshotclasses slow snapshot.storage.kubernetes.io/is-default-class-': {
    runBy: 'test/e2e/move-default.e2e.ts runs both steps with kubectl against the real apiserver',
  },
  'docs/cluster.md: kubectl annotate volumesnapshotclass <extra-class>': {
    notRun: 'a placeholder for the class to fix; audit prints the same command with the name (docs/troubleshooting.md)',
  },
  'docs/install.md: # self-signed: the image, the certificates, your kustomization': {
    runBy: 'test/e2e/install-recipe.e2e.ts pastes it against the real apiserver (podman and rollout status stood in for)',
  },
  'docs/install.md: # then, without first-install': { runBy: 'test/e2e/install-recipe.e2e.ts, after the first block' },
  'docs/install.md: # cert-manager: the image, your kustomization': {
    notRun:
      "needs cert-manager; test/bundle/manifests.test.ts renders the overlay and checks the Certificate, and the image and kustomization steps are the self-signed recipe's",
  },
  'docs/install.md: # OpenShift: the image, your kustomization': {
    runBy:
      "test/e2e/manifests.e2e.ts applies manifests/overlays/openshift to 1.36.2 (server dry run); the image and kustomization steps are the self-signed recipe's, which test/e2e/install-recipe.e2e.ts pastes",
  },
  'docs/install.md: kubectl apply -k manifests/overlays/policy-only': { runBy: 'test/e2e/policy.e2e.ts' },
  'docs/install.md: kubectl -n snapshot-webhook get pods': {
    notRun: 'needs the installed pods; test/e2e/webhook.e2e.ts makes the same two-source snapshot and checks the denial',
  },
  'docs/install.md: kubectl get volumesnapshotclass -o': { runBy: 'test/e2e/webhook.e2e.ts (pasted from docs/install.md)' },
  'docs/install.md: NS=default': {
    runBy:
      "test/e2e/switch-from-upstream.e2e.ts, after upstream's webhook-example made with kubectl apply and with kubectl create",
  },
  'docs/install.md: kubectl delete validatingwebhookconfiguration validation-webhook.snapshot.storage.k8s.io': {
    runBy: 'test/e2e/install-recipe.e2e.ts (a pod) and test/e2e/outside-a-pod.e2e.ts (outside a pod), each twice',
  },
  'docs/install.md: for crd in volumegroupsnapshots': { runBy: 'test/e2e/conversion.e2e.ts, twice with the webhook stopped' },
  'docs/microshift.md: IMAGE=registry.example.com/snapshot-webhook@sha256:': {
    runBy: 'test/bundle/device-layout.test.ts pastes it into an empty folder and checks the layout',
  },
  'docs/microshift.md: snapshot-webhook validate rootfs/usr/lib/microshift/manifests.d': {
    runBy: 'test/bundle/device-layout.test.ts, after the layout block',
  },
  'docs/troubleshooting.md: kubectl get validatingwebhookconfiguration validation-webhook.snapshot.storage.k8s.io': {
    notRun: 'reads an installed configuration and Secret; test/e2e/troubleshooting.e2e.ts makes the failure it diagnoses',
  },
};

const FENCE = /^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm;

function blocks(): Block[] {
  const files = [
    'README.md',
    ...readdirSync('docs')
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(FENCE)].map(([, text = '']) => ({ file, text, first: text.split('\n')[0] ?? '' })),
  );
}

/** The CHECKS key of a block: its file and the start of its first line that the key names. */
function keyOf(block: Block): string | undefined {
  return Object.keys(CHECKS).find(
    (k) => k.startsWith(`${block.file}: `) && block.first.startsWith(k.slice(block.file.length + 2)),
  );
}

const ROOT = resolve('.');
const scratch = mkdtempSync(join(tmpdir(), 'sw-doc-commands-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
// `snapshot-webhook` on the PATH, as `npm install -g` puts it (test/bundle/package.test.ts installs it for real).
const bin = join(scratch, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'snapshot-webhook'), `#!/bin/sh\nexec "${process.execPath}" "${ROOT}/dist/bundle/main.js" "$@"\n`);
chmodSync(join(bin, 'snapshot-webhook'), 0o755);
const work = join(scratch, 'work');
mkdirSync(work);
symlinkSync(join(ROOT, 'manifests'), join(work, 'manifests'));
const env = { ...process.env, KUBECONFIG: '', PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };

t.test('every shell block of README.md and docs/ is listed, and every listed block exists', async (t) => {
  const found = blocks();
  t.same(
    found.filter((b) => keyOf(b) === undefined).map((b) => `${b.file}: ${b.first}`),
    [],
    'blocks not listed here',
  );
  const keys = new Set(found.map(keyOf));
  t.same(
    Object.keys(CHECKS).filter((k) => !keys.has(k)),
    [],
    'listed blocks that are gone',
  );
  for (const [key, check] of Object.entries(CHECKS)) {
    const where = 'runBy' in check ? check.runBy : 'notRun' in check ? check.notRun : '';
    const path = /^(test\/\S+\.ts|\.ci\/run)/.exec(where)?.[1];
    if (path !== undefined) t.ok(readFileSync(path, 'utf8').length > 0, `${key}: ${path} exists`);
  }
});

// In document order.
for (const block of blocks()) {
  const key = keyOf(block);
  const check = key === undefined ? undefined : CHECKS[key];
  if (check === undefined || !('run' in check)) continue;
  t.test(`pasted: ${key}`, async (t) => {
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', block.text], {
      cwd: check.run === 'checkout' ? ROOT : work,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(r.status, check.status, `exit ${check.status}\n${r.stderr}`);
    if (check.stdout !== undefined) t.match(r.stdout, check.stdout);
  });
}

t.test('the README curl against npm start answers as the README shows', async (t) => {
  const readme = readFileSync('README.md', 'utf8');
  const curl = blocks().find((b) => b.file === 'README.md' && b.first.startsWith('curl '));
  const answer = /answers\n\n```json\n([\s\S]*?)```/.exec(readme)?.[1];
  t.ok(curl !== undefined && answer !== undefined, 'the README has both');
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  // npm start less its build (the suite runs on the built bundle), on a free port instead of 8443.
  const serve = `${scripts.start.split(' && ').slice(1).join(' && ')} --port=0`;
  const child = spawn('sh', ['-c', serve], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Already gone.
    }
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  for (let waited = 0; !/"port":\d+/.test(output) && waited < 15_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const port = /"port":(\d+)/.exec(output)?.[1];
  t.ok(port, 'npm start serves');
  const pasted = (curl?.text ?? '').replace('https://localhost:8443/', `https://localhost:${port}/`);
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', pasted], { cwd: ROOT, encoding: 'utf8', timeout: 15_000 });
  t.equal(r.status, 0, r.stderr);
  t.same(JSON.parse(r.stdout), JSON.parse(answer ?? '{}'), 'the answer, as the README shows it');
});
