// docs/tls.md, "Outside a pod", as an operator runs it, for the suites that install the webhook that way: `certs
// --ip --url` writes the client-config patch, the server runs as a plain process with the cluster's kubeconfig, and
// one `kubectl apply -k` of the outside-a-pod overlay (with the release's components) registers both webhook
// configurations by url.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestCluster } from './cluster.js';
import { kube } from './kube.js';
import { freePort, startProcess, waitFor, type Started } from './processes.js';
import { DRIVER, klass, VSCLASS } from './snapshot-objects.js';
import { httpsRequest } from '../helpers/https.js';

const ROOT = resolve('.');
const MAIN = join(ROOT, 'dist/bundle/main.js');

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** kubectl against the test cluster, with its exit status and output. */
export function kubectlOn(cluster: TestCluster, args: readonly string[], input?: string): Run {
  const r = spawnSync('kubectl', [`--kubeconfig=${cluster.kubeconfig}`, ...args], { encoding: 'utf8', input, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface OutsideInstall {
  readonly server: Started;
  readonly port: number;
  /** What `certs` printed, and then what `kubectl apply -k` of the overlay printed. */
  readonly certs: Run;
  readonly applied: Run;
}

/** The page's three steps, in `dir`, with 127.0.0.1 for the address the apiserver dials. */
export async function installOutsideAPod(cluster: TestCluster, dir: string): Promise<OutsideInstall> {
  const port = await freePort();
  const manifests = join(dir, 'manifests');
  cpSync(join(ROOT, 'manifests'), manifests, { recursive: true, filter: (src) => !src.includes('/generated') });
  const generated = join(manifests, 'overlays/outside-a-pod/generated');
  // Step 1 of the page, with the loopback address the apiserver dials here.
  const made = spawnSync(
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
  const certs = { status: made.status, stdout: made.stdout, stderr: made.stderr };
  // Step 2: the server, with the cluster's classes.
  const server = startProcess(process.execPath, [
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
  return { server, port, certs, applied: kubectlOn(cluster, ['apply', '-k', use]) };
}

/** The configurations this release's install registers, as `kubectl get -o name` prints them. */
export function registeredNames(): string[] {
  return kube.admissionPolicies
    ? [
        'validatingwebhookconfiguration.admissionregistration.k8s.io/object-checks.snapshot.storage.k8s.io',
        'validatingwebhookconfiguration.admissionregistration.k8s.io/validation-webhook.snapshot.storage.k8s.io',
      ]
    : ['validatingwebhookconfiguration.admissionregistration.k8s.io/validation-webhook.snapshot.storage.k8s.io'];
}

/**
 * A first default class for DRIVER (named `first`), and then a second one until the apiserver denies it: the
 * stderr of that denial (the webhook is called once its configuration is in the apiserver's cache).
 */
export async function secondDefaultDenied(
  cluster: TestCluster,
  first: string,
): Promise<{ firstStatus: number | null; denial: string }> {
  const create = (name: string): Run =>
    kubectlOn(cluster, ['create', '-f', '-'], JSON.stringify(klass(VSCLASS, name, DRIVER, true)));
  const firstStatus = create(first).status;
  let second: Run = { status: 0, stdout: '', stderr: '' };
  await waitFor(
    'the second default denied by the webhook',
    async () => {
      second = create(`${first}-second-${Date.now()}`);
      return second.status !== 0;
    },
    20_000,
    500,
  );
  return { firstStatus, denial: second.stderr };
}
