// docs/install.md, "Switching from upstream's webhook": upstream's v8.1.0 deploy/kubernetes/webhook-example
// (test/fixtures/upstream-webhook-example) installed as its README says, once with `kubectl apply -f` (the README's
// step 4) and once with `kubectl create -f`, then the page's block pasted, then the webhook installed outside a pod
// (outside-a-pod.ts). The rule must be live and nothing of upstream's left. create-cert.sh's steps are run as it runs
// them, with the e2e cluster's CA standing for the kubelet-serving signer that a controller-manager would run.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { docBlocks } from '../helpers/doc-blocks.js';
import { installOutsideAPod, kubectlOn, registeredNames, secondDefaultDenied } from './outside-a-pod.js';
import { stopAll, type Started } from './processes.js';
import { DRIVER } from './snapshot-objects.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/upstream-webhook-example/', import.meta.url));
const SERVICE = 'snapshot-validation-service';
const SECRET = 'snapshot-validation-secret';
const root = mkdtempSync(join(tmpdir(), 'sw-e2e-switch-'));
const running: { cluster?: TestCluster; server?: Started }[] = [];
t.teardown(async () => {
  for (const { cluster, server } of running) {
    await server?.stop();
    await cluster?.stop();
  }
  stopAll();
  rmSync(root, { recursive: true, force: true });
});

/** Every object upstream's example and create-cert.sh make, by `kubectl get` name, with its namespace. */
const UPSTREAM: readonly (readonly [string, string?])[] = [
  ['validatingwebhookconfiguration/validation-webhook.snapshot.storage.k8s.io'],
  ['validatingwebhookconfiguration/validation-webhook.groupsnapshot.storage.k8s.io'],
  ['deployment/snapshot-validation-deployment', 'default'],
  [`service/${SERVICE}`, 'default'],
  [`secret/${SECRET}`, 'default'],
  ['serviceaccount/snapshot-webhook', 'default'],
  ['clusterrole/snapshot-webhook-runner'],
  ['clusterrolebinding/snapshot-webhook-role'],
  [`certificatesigningrequest/${SERVICE}.default`],
];

/** create-cert.sh --service snapshot-validation-service --secret snapshot-validation-secret --namespace default. */
function createCert(cluster: TestCluster, dir: string): void {
  const conf = join(dir, 'csr.conf');
  writeFileSync(
    conf,
    [
      '[req]',
      'req_extensions = v3_req',
      'distinguished_name = req_distinguished_name',
      '[req_distinguished_name]',
      '[ v3_req ]',
      'basicConstraints = CA:FALSE',
      'keyUsage = nonRepudiation, digitalSignature, keyEncipherment',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = @alt_names',
      '[alt_names]',
      `DNS.1 = ${SERVICE}`,
      `DNS.2 = ${SERVICE}.default`,
      `DNS.3 = ${SERVICE}.default.svc`,
      '',
    ].join('\n'),
  );
  const openssl = (args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(['genrsa', '-out', 'server-key.pem', '2048']);
  openssl([
    'req',
    '-new',
    '-key',
    'server-key.pem',
    '-subj',
    `/CN=system:node:${SERVICE}.default.svc;/O=system:nodes`,
    '-out',
    'server.csr',
    '-config',
    conf,
  ]);
  const csr = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: `${SERVICE}.default` },
    spec: {
      groups: ['system:authenticated'],
      request: readFileSync(join(dir, 'server.csr')).toString('base64'),
      signerName: 'kubernetes.io/kubelet-serving',
      usages: ['digital signature', 'key encipherment', 'server auth'],
    },
  };
  const must = (args: string[], input?: string): void => {
    const r = kubectlOn(cluster, args, input);
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  };
  must(['create', '-f', '-'], JSON.stringify(csr));
  must(['certificate', 'approve', `${SERVICE}.default`]);
  // The signer's part: the cluster CA signs the request.
  const ca = ['-CA', join(cluster.dir, 'ca.crt'), '-CAkey', join(cluster.dir, 'ca.key'), '-CAcreateserial'];
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    ...ca,
    '-out',
    'server-cert.pem',
    '-days',
    '1',
    '-extfile',
    conf,
    '-extensions',
    'v3_req',
  ]);
  const pair = [`--key=${join(dir, 'server-key.pem')}`, `--cert=${join(dir, 'server-cert.pem')}`];
  const secret = kubectlOn(cluster, ['create', 'secret', 'tls', SECRET, ...pair, '--dry-run=client', '-o', 'yaml']);
  must(['-n', 'default', 'apply', '-f', '-'], secret.stdout);
}

/** The README's steps 2 and 4: the template with the cluster's CA (patch-ca-bundle.sh), then the folder with `how`. */
function installExample(cluster: TestCluster, dir: string, how: 'apply' | 'create'): void {
  const folder = join(dir, 'webhook-example');
  mkdirSync(folder);
  for (const file of ['webhook.yaml', 'rbac-snapshot-webhook.yaml']) cpSync(join(FIXTURES, file), join(folder, file));
  const kubeconfig = JSON.parse(kubectlOn(cluster, ['config', 'view', '--raw', '-o', 'json']).stdout) as {
    clusters: { cluster: Record<string, string> }[];
  };
  const bundle = kubeconfig.clusters[0]?.cluster['certificate-authority-data'] ?? '';
  const template = readFileSync(join(FIXTURES, 'admission-configuration-template'), 'utf8');
  writeFileSync(join(folder, 'admission-configuration.yaml'), template.replaceAll('${CA_BUNDLE}', bundle));
  const r = kubectlOn(cluster, [how, '-f', folder]);
  if (r.status !== 0) throw new Error(`kubectl ${how} -f webhook-example: ${r.stderr}`);
}

const present = (cluster: TestCluster, [name, namespace]: readonly [string, string?]): boolean =>
  kubectlOn(cluster, ['get', name, ...(namespace === undefined ? [] : ['-n', namespace]), '-o', 'name']).status === 0;

for (const how of ['apply', 'create'] as const) {
  t.test(
    `upstream's example made with kubectl ${how}, the page's step, then ours: the rule live, nothing of upstream's left`,
    async (t) => {
      const dir = join(root, how);
      mkdirSync(dir);
      const cluster = await startCluster(dir);
      const run: (typeof running)[number] = { cluster };
      running.push(run);
      const kc = new KubeConfig();
      kc.loadFromFile(cluster.kubeconfig);
      await installCrds(kc, 'untyped');
      createCert(cluster, dir);
      installExample(cluster, dir, how);
      t.same(
        UPSTREAM.filter((o) => !present(cluster, o)),
        [],
        "upstream's objects are all there",
      );

      const [step = ''] = docBlocks('install', "Switching from upstream's webhook");
      const pasted = spawnSync('bash', ['-euo', 'pipefail', '-c', step], {
        encoding: 'utf8',
        env: { ...process.env, KUBECONFIG: cluster.kubeconfig },
        timeout: 60_000,
      });
      t.equal(pasted.status, 0, `the page's block: ${pasted.stdout}${pasted.stderr}`);
      t.same(
        UPSTREAM.filter((o) => present(cluster, o)),
        [],
        "none of upstream's objects is left",
      );

      const install = await installOutsideAPod(cluster, dir);
      run.server = install.server;
      t.equal(install.applied.status, 0, `kubectl apply -k: ${install.applied.stdout}${install.applied.stderr}`);
      const registered = kubectlOn(cluster, ['get', 'validatingwebhookconfigurations', '-o', 'name']).stdout.trim().split('\n');
      t.same(registered.sort(), registeredNames(), 'only our configurations');
      const clients = kubectlOn(cluster, [
        'get',
        'validatingwebhookconfigurations',
        '-o',
        'jsonpath={.items[*].webhooks[*].clientConfig}',
      ]).stdout;
      t.notMatch(clients, '"service"', 'every webhook is called by url: nothing of the service merged in');
      const { firstStatus, denial } = await secondDefaultDenied(cluster, `switched-${how}`);
      t.equal(firstStatus, 0, 'a first default is admitted');
      t.match(denial, `denied the request: default snapshot class: switched-${how} already exists for driver: ${DRIVER}`);
      await install.server.stop();
      await cluster.stop();
    },
  );
}
