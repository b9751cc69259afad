// docs/install.md, "On a plain cluster, self-signed", pasted as a reader pastes it: from a copy of the checkout's top
// folder, with real `npx snapshot-webhook certs` and kubectl's own `apply -k` against the real apiserver (the
// release's component added to the kustomization, as the block's comment says). Two commands are stood in for: podman
// (no registry here; `npm run test:image` builds and runs the image) records what it was asked, and `kubectl rollout
// status` answers at once (no kubelet here; as-a-pod.e2e runs the pod). Then "Remove it safely" for a pod, twice,
// after the server made the default-class Leases in the namespace, and a list of what is left. The suite has no
// namespace controller, so a stand-in does its last step only: once the Namespace is terminating, it records what is
// still in it and then finalizes it, as the controller would after deleting that.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import t from 'tap';
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { CLASS_KIND_FACTS } from '../../src/classes/class-kinds.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { ask } from './direct-review.js';
import { docBlocks } from '../helpers/doc-blocks.js';
import { kube } from './kube.js';
import { kubectlOn } from './outside-a-pod.js';
import { runToEnd, stopAll, waitFor } from './processes.js';
import { startWebhook, type TestWebhook } from './webhook.js';

const ROOT = resolve('.');
const NAMESPACE = 'snapshot-webhook';
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-recipe-'));
const checkout = join(dir, 'checkout');
const shims = join(dir, 'shims');
const podmanLog = join(dir, 'podman.log');
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
t.teardown(async () => {
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** The checkout's top folder as a reader has it after `npm install`: its own manifests, no generated/. */
function copyCheckout(): void {
  mkdirSync(checkout);
  for (const file of ['package.json', 'package-lock.json', '.npmrc', 'Containerfile', 'tsconfig.json', 'tsconfig.build.json'])
    cpSync(join(ROOT, file), join(checkout, file));
  for (const folder of ['node_modules', 'src', 'schemas']) symlinkSync(join(ROOT, folder), join(checkout, folder));
  // dist/ of its own, with the build's folders in it: what the recipe writes there (dist/image/) stays in the copy.
  mkdirSync(join(checkout, 'dist'));
  for (const entry of readdirSync(join(ROOT, 'dist'))) symlinkSync(join(ROOT, 'dist', entry), join(checkout, 'dist', entry));
  cpSync(join(ROOT, 'manifests'), join(checkout, 'manifests'), { recursive: true, filter: (src) => !src.includes('/generated') });
}

/** podman and `kubectl rollout status` stood in for; every other kubectl command is the real one. */
function writeShims(): void {
  mkdirSync(shims);
  const realKubectl = execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim();
  // It logs each command, and answers what `npm run image` reads back: no list yet, then one of two platforms, a
  // container's id, and a file copied out of it.
  const list = JSON.stringify({
    manifests: ['amd64', 'arm64'].map((architecture, i) => ({
      digest: `sha256:${String(i).repeat(64)}`,
      platform: { os: 'linux', architecture },
    })),
  });
  writeFileSync(
    join(shims, 'podman'),
    [
      '#!/bin/sh',
      `echo "$*" >> '${podmanLog}'`,
      'case "$1 $2" in',
      '  "manifest exists") exit 1;;',
      `  "manifest inspect") echo '${list}';;`,
      'esac',
      'case "$1" in',
      '  create) echo stood-in;;',
      `  cp) echo '{}' > "$3";;`,
      'esac',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(shims, 'kubectl'),
    `#!/bin/sh\ncase " $* " in *" rollout status "*) echo "rollout status: stood in for"; exit 0;; esac\nexec '${realKubectl}' "$@"\n`,
  );
  for (const name of ['podman', 'kubectl']) chmodSync(join(shims, name), 0o755);
}

/**
 * Runs a pasted block in the checkout copy against the test cluster, without blocking the event loop (the
 * namespace stand-in below runs meanwhile).
 */
async function paste(block: string): Promise<{ status: number | null; output: string }> {
  const env = {
    ...process.env,
    KUBECONFIG: (cluster as TestCluster).kubeconfig,
    PATH: `${shims}${delimiter}${process.env.PATH ?? ''}`,
  };
  const r = await runToEnd('bash', ['-euo', 'pipefail', '-c', block], { cwd: checkout, env });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

let kc: KubeConfig;
t.before(async () => {
  cluster = await startCluster(dir);
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  copyCheckout();
  writeShims();
});

const [install = '', failClosed = ''] = docBlocks('install', 'On a plain cluster, self-signed');
const FIRST_INSTALL = '  - ../manifests/components/first-install\n';

/** The failurePolicy of every webhook of the default-class configuration. */
async function failurePolicies(): Promise<string[]> {
  const hooks = kc.makeApiClient(AdmissionregistrationV1Api);
  const config = await hooks.readValidatingWebhookConfiguration({ name: 'validation-webhook.snapshot.storage.k8s.io' });
  return (config.webhooks ?? []).map((w) => w.failurePolicy ?? '');
}

t.test('the plain-cluster recipe, pasted: the image named, the certificates served, first-install and then Fail', async (t) => {
  t.match(install, FIRST_INSTALL, 'the recipe lists first-install');
  const release = kube.components.map((c) => `  - ../manifests/components/${c}\n`).join('');
  const installed = await paste(install.replace(FIRST_INSTALL, `${FIRST_INSTALL}${release}`));
  t.equal(installed.status, 0, installed.output);
  t.match(installed.output, 'rollout status: stood in for', 'the recipe waits for the rollout');

  const image = /newName: (\S+), newTag: (\S+) \}/.exec(install);
  const named = `${image?.[1] ?? '?'}:${image?.[2] ?? '?'}`;
  const podman = readFileSync(podmanLog, 'utf8').trim().split('\n');
  const builds = podman.filter((l) => l.startsWith('build '));
  t.same(
    builds.map((l) => [/--platform=(\S+)/.exec(l)?.[1], l.includes(` --manifest=${named} `)]),
    [
      ['linux/amd64', true],
      ['linux/arm64', true],
    ],
    'podman builds one image per platform into the list the kustomization names',
  );
  t.equal(podman.at(-1), `manifest push --all ${named} docker://${named}`, 'and pushes the list with both images');
  t.ok(existsSync(join(checkout, 'dist/image/sbom-linux-arm64.cdx.json')), 'the SBOMs are written beside it');
  const apps = kc.makeApiClient(AppsV1Api);
  const deployment = await apps.readNamespacedDeployment({ name: 'snapshot-webhook', namespace: NAMESPACE });
  t.same(
    deployment.spec?.template.spec?.containers.map((c) => c.image),
    [named],
    'the Deployment runs the pushed image',
  );
  const generated = join(checkout, 'manifests/overlays/self-signed/generated');
  const core = kc.makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ name: 'snapshot-webhook-tls', namespace: NAMESPACE });
  t.equal(
    Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64')
      .toString()
      .trim(),
    readFileSync(join(generated, 'tls.crt'), 'utf8').trim(),
    'the Secret holds the certificate npx snapshot-webhook certs made',
  );
  const hooks = kc.makeApiClient(AdmissionregistrationV1Api);
  const bundle = readFileSync(join(generated, 'ca-bundle.crt')).toString('base64');
  const names = (await hooks.listValidatingWebhookConfiguration()).items.map((c) => c.metadata?.name ?? '');
  for (const name of names) {
    const config = await hooks.readValidatingWebhookConfiguration({ name });
    for (const w of config.webhooks ?? []) t.equal(w.clientConfig.caBundle, bundle, `${w.name}: its caBundle is the CA made`);
  }
  t.same(await failurePolicies(), ['Ignore', 'Ignore'], 'the first apply: first-install makes the default-class webhooks Ignore');

  const closed = await paste(failClosed);
  t.equal(closed.status, 0, closed.output);
  t.notMatch(readFileSync(join(checkout, 'my-install/kustomization.yaml'), 'utf8'), 'first-install', 'the component taken out');
  t.same(await failurePolicies(), ['Fail', 'Fail'], 'applied again: Fail');
});

/** kubectl against the test cluster; its output, or a thrown error naming what failed. */
function kubectlOut(...args: string[]): string {
  const r = kubectlOn(cluster as TestCluster, args);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Everything in the namespace, by every namespaced kind the apiserver lists. */
function namespaceContents(): string[] {
  const kinds = kubectlOut('api-resources', '--namespaced=true', '--verbs=list,delete', '-o', 'name').trim().split('\n');
  return kubectlOut('get', kinds.join(','), '-n', NAMESPACE, '-o', 'name', '--ignore-not-found')
    .split('\n')
    .filter((line) => line !== '');
}

/** The namespace controller's last step, stood in for: what is left once the Namespace terminates, then finalized. */
function finalizeWhenTerminating(left: string[][]): () => void {
  const core = kc.makeApiClient(CoreV1Api);
  let stopped = false;
  const loop = async (): Promise<void> => {
    while (!stopped) {
      const ns = await core.readNamespace({ name: NAMESPACE }).catch(() => undefined);
      if (ns?.metadata?.deletionTimestamp !== undefined) {
        // kubectl deletes the Namespace first and the objects after it: give it the time to send those.
        let contents = namespaceContents();
        for (let waited = 0; contents.length > 0 && waited < 5000; waited += 250) {
          await new Promise((r) => setTimeout(r, 250));
          contents = namespaceContents();
        }
        left.push(contents);
        await core
          .replaceNamespaceFinalize({ name: NAMESPACE, body: { ...ns, spec: { finalizers: [] } } })
          .catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  void loop();
  return () => {
    stopped = true;
  };
}

t.test("docs/install.md's removal for a pod, twice after the recipe: exits 0, and leaves nothing", async (t) => {
  // The replicas' Leases, made as a pod makes them: the server in the namespace records an admitted default.
  webhook = await startWebhook(dir, (cluster as TestCluster).kubeconfig, [`--namespace=${NAMESPACE}`]);
  for (const group of [false, true]) {
    const answer = await ask(webhook, group, `recipe-${group ? 'group' : 'snapshot'}`, 'recipe.csi.example.com', false);
    t.ok(answer.allowed, `a first default ${group ? 'group ' : ''}class admitted: ${answer.message}`);
  }
  const leases = Object.values(CLASS_KIND_FACTS).map((f) => `lease.coordination.k8s.io/${f.claimLease}`);
  await waitFor('both claim Leases', async () => leases.every((l) => namespaceContents().includes(l)), 10_000, 250);
  await webhook.process.stop();

  const [removal = ''] = docBlocks('install', 'Remove it safely');
  t.match(removal, 'kubectl delete -k my-install', 'the block for a pod');
  const left: string[][] = [];
  const stop = finalizeWhenTerminating(left);
  try {
    for (const round of ['installed', 'already removed']) {
      const r = await paste(removal);
      t.equal(r.status, 0, `${round}: ${r.output}`);
    }
  } finally {
    stop();
  }
  t.same(left, [[]], 'nothing was left in the Namespace when it terminated');
  const core = kc.makeApiClient(CoreV1Api);
  t.equal(
    await core.readNamespace({ name: NAMESPACE }).then(
      () => 'there',
      () => 'gone',
    ),
    'gone',
    'the Namespace is gone',
  );
  const project = /snapshot-webhook|snapshot\.storage\.k8s\.io/;
  for (const kind of ['validatingwebhookconfigurations', 'clusterroles', 'clusterrolebindings']) {
    t.same(
      kubectlOut('get', kind, '-o', 'name')
        .split('\n')
        .filter((n) => project.test(n)),
      [],
      `no ${kind} of the project`,
    );
  }
});
