// docs/tls.md, "Outside a pod", as an operator runs it (outside-a-pod.ts). A second default class is then denied by
// the apiserver with our webhook's message. Then docs/install.md's removal for this path runs twice, and nothing of
// the project is left.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { docBlocks } from '../helpers/doc-blocks.js';
import { installOutsideAPod, kubectlOn, registeredNames, secondDefaultDenied, type Run } from './outside-a-pod.js';
import { stopAll, type Started } from './processes.js';
import { DRIVER } from './snapshot-objects.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-outside-'));
let cluster: TestCluster | undefined;
let server: Started | undefined;
t.teardown(async () => {
  await server?.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

const kubectl = (args: readonly string[], input?: string): Run => kubectlOn(cluster as TestCluster, args, input);

t.test("registered from outside a pod with the docs' commands, the webhook decides", async (t) => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  const install = await installOutsideAPod(cluster, dir);
  server = install.server;
  t.equal(install.certs.status, 0, install.certs.stderr);
  t.equal(install.applied.status, 0, `kubectl apply -k: ${install.applied.stdout}${install.applied.stderr}`);
  const registered = kubectl(['get', 'validatingwebhookconfigurations', '-o', 'name']).stdout.trim().split('\n').sort();
  t.same(registered, registeredNames(), 'the configurations this release installs');

  const { firstStatus, denial } = await secondDefaultDenied(cluster, 'outside-first');
  t.equal(firstStatus, 0, 'a first default is admitted');
  t.match(
    denial,
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
    `https://127.0.0.1:${install.port}/validate`,
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
