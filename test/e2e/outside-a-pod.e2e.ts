// docs/tls.md, "Outside a pod", as an operator runs it: `certs --ip --url` writes the client-config patch, the server
// runs as a plain process with the cluster's kubeconfig, and one `kubectl apply -k` of the outside-a-pod overlay (with
// the release's components) registers both webhook configurations by url. A second default class is then denied by
// the apiserver with our webhook's message. Then docs/install.md's removal for this path runs twice, and nothing of
// the project is left.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { docBlocks } from './doc-blocks.js';
import { kube } from './kube.js';
import { freePort, startProcess, stopAll, waitFor, type Started } from './processes.js';
import { DRIVER, klass, VSCLASS } from './snapshot-objects.js';
import { httpsRequest } from '../helpers/https.js';

const ROOT = resolve('.');
const MAIN = join(ROOT, 'dist/bundle/main.js');
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-outside-'));
let cluster: TestCluster | undefined;
let server: Started | undefined;
t.teardown(async () => {
  await server?.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(args: readonly string[], input?: string) {
  const kubeconfig = (cluster as TestCluster).kubeconfig;
  const r = spawnSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { encoding: 'utf8', input, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test("registered from outside a pod with the docs' commands, the webhook decides", async (t) => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  const port = await freePort();
  const manifests = join(dir, 'manifests');
  cpSync(join(ROOT, 'manifests'), manifests, { recursive: true, filter: (src) => !src.includes('/generated') });
  const generated = join(manifests, 'overlays/outside-a-pod/generated');
  // Step 1 of the page, with the loopback address the apiserver dials here.
  const certs = spawnSync(
    process.execPath,
    [
      MAIN,
      'certs',
      '--ip',
      '127.0.0.1',
      '--url',
      `https://127.0.0.1:${port}`,
      '--out',
      generated,
      '--service',
      'dev',
      '--namespace',
      'dev',
    ],
    { encoding: 'utf8' },
  );
  t.equal(certs.status, 0, certs.stderr);
  // Step 2: the server, with the cluster's classes.
  server = startProcess(process.execPath, [
    MAIN,
    'serve',
    `--kubeconfig=${cluster.kubeconfig}`,
    '--namespace=default',
    '--bind-address=127.0.0.1',
    `--port=${port}`,
    `--tls-cert-file=${join(generated, 'tls.crt')}`,
    `--tls-private-key-file=${join(generated, 'tls.key')}`,
    '--shutdown-delay=0',
  ]);
  const ca = readFileSync(join(generated, 'ca-bundle.crt'));
  // The certificate names dev.dev.svc besides 127.0.0.1 (the service and namespace given above).
  const ready = async (): Promise<boolean> =>
    (await httpsRequest(port, { method: 'GET', path: '/readyz', ca, servername: 'dev.dev.svc' })).status === 200;
  await waitFor('the server ready', ready, 30_000);
  // Step 3: one apply of the overlay, with the components this release needs (docs/install.md).
  const use = join(dir, 'use');
  mkdirSync(use);
  writeFileSync(
    join(use, 'kustomization.yaml'),
    JSON.stringify({
      resources: ['../manifests/overlays/outside-a-pod'],
      components: kube.components.map((c) => `../manifests/components/${c}`),
    }),
  );
  const applied = kubectl(['apply', '-k', use]);
  t.equal(applied.status, 0, `kubectl apply -k: ${applied.stdout}${applied.stderr}`);
  const registered = kubectl(['get', 'validatingwebhookconfigurations', '-o', 'name']).stdout.trim().split('\n').sort();
  t.same(
    registered,
    kube.admissionPolicies
      ? [
          'validatingwebhookconfiguration.admissionregistration.k8s.io/object-checks.snapshot.storage.k8s.io',
          'validatingwebhookconfiguration.admissionregistration.k8s.io/validation-webhook.snapshot.storage.k8s.io',
        ]
      : ['validatingwebhookconfiguration.admissionregistration.k8s.io/validation-webhook.snapshot.storage.k8s.io'],
    'the configurations this release installs',
  );

  const create = (name: string) => kubectl(['create', '-f', '-'], JSON.stringify(klass(VSCLASS, name, DRIVER, true)));
  t.equal(create('outside-first').status, 0, 'a first default is admitted');
  let second = { status: 0 as number | null, stderr: '' };
  await waitFor(
    'the second default denied by the webhook',
    async () => {
      second = create(`outside-second-${Date.now()}`);
      return second.status !== 0;
    },
    20_000,
    500,
  );
  t.match(
    second.stderr,
    `admission webhook "validation-webhook.snapshot.storage.k8s.io" denied the request: default snapshot class: outside-first already exists for driver: ${DRIVER}`,
  );
  t.match(
    kubectl([
      'get',
      'validatingwebhookconfiguration',
      'validation-webhook.snapshot.storage.k8s.io',
      '-o',
      'jsonpath={.webhooks[0].clientConfig.url}',
    ]).stdout,
    `https://127.0.0.1:${port}/validate`,
    "docs/troubleshooting.md's look at the registration: the url, where a pod's install has a Service",
  );
});

/** docs/install.md, "Remove it safely": the commands of the block for a webhook outside a pod. */
function removalCommands(): string[][] {
  const block = docBlocks('install', 'Remove it safely').find((b) => b.includes('-n default delete lease')) ?? '';
  return block
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('kubectl '))
    .map((line) => line.split(' ').slice(1));
}

t.test("docs/install.md's removal outside a pod: exits 0 twice, and leaves nothing", async (t) => {
  const commands = removalCommands();
  t.equal(commands.length, 2, 'the page has the two commands');
  const leases = kubectl(['get', 'leases', '-n', 'default', '-o', 'name']).stdout;
  t.match(leases, 'lease.coordination.k8s.io/snapshot-webhook-default-volumesnapshotclass', 'the install made its Lease');
  await server?.stop();
  for (const round of ['installed', 'already removed'])
    for (const args of commands) {
      const r = kubectl(args);
      t.equal(r.status, 0, `${round}: kubectl ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    }
  const ours = (kind: string, namespace?: string): string[] =>
    kubectl(['get', kind, ...(namespace === undefined ? [] : ['-n', namespace]), '-o', 'name'])
      .stdout.split('\n')
      .filter((name) => /snapshot-webhook|snapshot\.storage\.k8s\.io/.test(name));
  t.same(ours('validatingwebhookconfigurations'), [], 'no webhook configuration of the project');
  t.same(ours('leases', 'default'), [], 'no Lease of the project');
});
