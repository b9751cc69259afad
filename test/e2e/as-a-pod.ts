// The server as its Deployment's pod runs it: the shipped ServiceAccount and RBAC (manifests/base), a token the
// apiserver issued for that account, mounted where the kubelet mounts it, and the in-cluster environment; no
// kubeconfig. The suites and the bench's cluster mode start it this way through `podCommand`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { deploymentReadOnlyRoot } from '../helpers/deployment.mjs';
import type { TestCluster } from './cluster.js';

const BASE = fileURLToPath(new URL('../../manifests/base/', import.meta.url));

/** The kinds of the shipped objects that make the pod's identity: its namespace, its account and what RBAC grants. */
const IDENTITY_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** The base as kustomize renders it (the namespace is the kustomization's), identity objects only. */
function shippedIdentity(): KubernetesObject[] {
  const r = spawnSync('kubectl', ['kustomize', BASE], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`kubectl kustomize manifests/base: ${r.stderr}`);
  return (loadAllYaml(r.stdout) as KubernetesObject[]).filter((o) => IDENTITY_KINDS.has(o.kind ?? ''));
}

/** Where the kubelet mounts a pod's service account token (client-node's in-cluster config reads it there). */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface PodIdentity {
  /** The namespace the manifests put the webhook in (the pod's POD_NAMESPACE). */
  readonly namespace: string;
  /** A folder with what the kubelet would mount: `token`, `ca.crt` and `namespace`. */
  readonly secretsDir: string;
  /** The in-cluster environment: the apiserver's address as the kubelet sets it, the pod's fields, a bare HOME. */
  readonly env: Record<string, string>;
}

/**
 * Creates the shipped namespace, ServiceAccount and RBAC in the cluster as rendered (admin's kubeconfig), and asks
 * the apiserver for a token of that ServiceAccount (TokenRequest, as the kubelet does for a projected volume).
 */
export async function podIdentity(cluster: TestCluster, dir: string): Promise<PodIdentity> {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const objects = kc.makeApiClient(KubernetesObjectApi);
  let account: KubernetesObject | undefined;
  for (const object of shippedIdentity()) {
    await objects.create(object);
    if (object.kind === 'ServiceAccount') account = object;
  }
  const name = account?.metadata?.name;
  const namespace = account?.metadata?.namespace;
  if (name === undefined || namespace === undefined) throw new Error('manifests/base: no ServiceAccount with a namespace');
  const request = await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const token = request.status?.token;
  if (token === undefined) throw new Error(`no token issued for ${namespace}/${name}`);
  const secretsDir = join(dir, 'serviceaccount');
  mkdirSync(secretsDir, { recursive: true });
  writeFileSync(join(secretsDir, 'token'), token);
  writeFileSync(join(secretsDir, 'ca.crt'), readFileSync(join(cluster.dir, 'ca.crt')));
  writeFileSync(join(secretsDir, 'namespace'), namespace);
  // A pod has no ~/.kube/config, which client-node would read before the service account.
  const home = join(dir, 'pod-home');
  mkdirSync(home, { recursive: true });
  return {
    namespace,
    secretsDir,
    env: {
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: String(cluster.port),
      POD_NAMESPACE: namespace,
      POD_NAME: 'snapshot-webhook-e2e',
      HOME: home,
    },
  };
}

/**
 * The environment of a pod's container: this process's, the container's own values (`runtime`: the Deployment's
 * NODE_OPTIONS and GLIBC_TUNABLES for ours) and the in-cluster variables; KUBECONFIG removed, as a pod has none.
 */
export function podEnv(identity: PodIdentity, runtime: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...runtime, ...identity.env };
  delete env.KUBECONFIG;
  return env;
}

/**
 * The command that runs `command args` with the identity mounted at the kubelet's path: in a mount namespace of its
 * own (`unshare -m`, which needs root, as the benches' network namespaces do), a small tmpfs over /var/run holds
 * only the service account's files, so nothing outside that process sees them. When the Deployment sets
 * `readOnlyRootFilesystem`, every mount of that namespace but /proc, /sys and /dev is then made read-only, the
 * token's too (the kubelet mounts it so): a write the server tries fails as it would in the pod. `unshare` and the
 * shell exec in place: the pid spawned is the server's.
 */
export function podCommand(identity: PodIdentity, command: string, args: readonly string[]): [string, string[]] {
  const readOnly = [
    'mount -o bind,remount,ro /',
    'awk \'$2 != "/" && $2 !~ "^/(proc|sys|dev|run)(/|$)" { print $2 }\' /proc/self/mounts |',
    '  while read -r m; do mount -o bind,remount,ro "$m"; done',
    'mount -o bind,remount,ro "$run"',
  ];
  const script = [
    'set -e',
    'run=$(readlink -f /var/run)',
    'mount -t tmpfs -o size=1m,mode=0755 pod-secrets "$run"',
    `mkdir -p ${SERVICE_ACCOUNT_DIR}`,
    `cp "$0/token" "$0/ca.crt" "$0/namespace" ${SERVICE_ACCOUNT_DIR}/`,
    ...(deploymentReadOnlyRoot() ? readOnly : []),
    'exec "$@"',
  ].join('\n');
  return ['unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, identity.secretsDir, command, ...args]];
}
