// A container as its Deployment's pod runs it: the shipped ServiceAccount and RBAC (manifests/base), a token the
// apiserver issued for that account, mounted where the kubelet mounts it, and the in-cluster environment; no
// kubeconfig. `podCommand` runs a container (for ours, shipped-container.ts) from its image's files in a root of its
// own, with its secret volumes, as the Deployment's user (or the one OpenShift assigns), without capabilities,
// under its memory limit and its seccomp profile. The e2e suite and the bench's cluster mode start it this way.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, KubernetesObjectApi, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { deploymentSecurity, memoryLimitMb, type DeploymentSecurity } from '../helpers/deployment.mjs';
import type { TestCluster } from './cluster.js';
import { podCgroup, type PodCgroup } from './pod-cgroup.js';
import { runtimeDefaultSeccomp, SECCOMP_LOADER } from './pod-seccomp.js';
import { serviceAccountToken } from './service-account-token.js';
import { processUser, volumeOwnership, type Ownership } from './pod-user.js';

const MANIFESTS = fileURLToPath(new URL('../../manifests/', import.meta.url));

/** The kinds of the shipped objects that make the pod's identity: its namespace, its account and what RBAC grants. */
const IDENTITY_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** A folder of manifests/ (`base`, `overlays/openshift`, ...) as kustomize renders it. */
function rendered(folder: string): KubernetesObject[] {
  const r = spawnSync('kubectl', ['kustomize', MANIFESTS + folder], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`kubectl kustomize manifests/${folder}: ${r.stderr}`);
  return loadAllYaml(r.stdout) as KubernetesObject[];
}

/** The pod template's spec of the Deployment in a folder of manifests/, rendered (for `deploymentSecurity`). */
export function renderedPod(folder: string): object {
  const deployment = rendered(folder).find((o) => o.kind === 'Deployment') as { spec?: { template?: { spec?: object } } };
  const pod = deployment?.spec?.template?.spec;
  if (pod === undefined) throw new Error(`manifests/${folder}: no Deployment`);
  return pod;
}

/** Where the kubelet mounts a pod's service account token (client-node's in-cluster config reads it there). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface PodIdentity {
  /** The namespace the manifests put the webhook in (the pod's POD_NAMESPACE). */
  readonly namespace: string;
  /** A folder with what the kubelet would mount: `token`, `ca.crt` and `namespace`. */
  readonly secretsDir: string;
  /** The in-cluster environment: the apiserver's address as the kubelet sets it, the pod's fields and its name. */
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
  for (const object of rendered('base').filter((o) => IDENTITY_KINDS.has(o.kind ?? ''))) {
    await objects.create(object);
    if (object.kind === 'ServiceAccount') account = object;
  }
  const name = account?.metadata?.name;
  const namespace = account?.metadata?.namespace;
  if (name === undefined || namespace === undefined) throw new Error('manifests/base: no ServiceAccount with a namespace');
  const token = await serviceAccountToken(kc, namespace, name);
  const secretsDir = join(dir, 'serviceaccount');
  mkdirSync(secretsDir, { recursive: true });
  writeFileSync(join(secretsDir, 'token'), token);
  writeFileSync(join(secretsDir, 'ca.crt'), readFileSync(join(cluster.dir, 'ca.crt')));
  writeFileSync(join(secretsDir, 'namespace'), namespace);
  return {
    namespace,
    secretsDir,
    env: {
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: String(cluster.port),
      POD_NAMESPACE: namespace,
      POD_NAME: 'snapshot-webhook-e2e',
      HOSTNAME: 'snapshot-webhook-e2e',
    },
  };
}

/**
 * A container of the pod as its image and manifest define it. Paths are the container's, except the host files
 * and folders named as the sources of `files` and `secrets`.
 */
export interface PodContainer {
  /** The image's own files and folders: the path in the image, and the host file or folder bound there read-only. */
  readonly files: Readonly<Record<string, string>>;
  readonly workingDir: string;
  /** The image's USER, which the manifest's runAsUser and runAsGroup override. */
  readonly user: { readonly user: number; readonly group: number };
  /** The entrypoint, then the arguments. */
  readonly command: readonly string[];
  /** The image's ENV and the manifest's own values. */
  readonly env: Readonly<Record<string, string>>;
  /** Secret volumes: the mount path, and the host folder with the files the kubelet would write there. */
  readonly secrets: Readonly<Record<string, string>>;
}

/**
 * A container's environment: the image's and the manifest's values and the in-cluster variables, over a PATH and
 * the HOME runc gives the user (pod-user.ts); nothing else. `env -i` sets it inside the root, for the reason
 * test/helpers/exact-env.mjs gives (tap's `--import` in every child's NODE_OPTIONS).
 */
function podEnv(identity: PodIdentity, container: PodContainer, home: string): string[] {
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, ...container.env, ...identity.env };
  return Object.entries(env).map(([name, value]) => `${name}=${value}`);
}

/** The distroless base's users and groups; its nonroot user's home is an empty folder (no ~/.kube/config). */
const PASSWD = 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnonroot:x:65532:\n';
const NONROOT_HOME = '/home/nonroot';

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

export interface PodStart {
  readonly command: string;
  readonly args: string[];
  /** The pod's memory cgroup: remove it once the process has exited. */
  readonly cgroup: PodCgroup;
}

/**
 * The command that runs `container` as the kubelet would, with the manifest's security settings
 * (`deploymentSecurity`, the base's unless given), in a mount namespace of its own (`unshare -m`: root only, as the
 * benches' network namespaces are), so that nothing outside that process sees its mounts:
 * - its root is a small tmpfs (mounted on a fresh folder under `dir`) holding the image's files, each bound
 *   read-only from the host; the host's /usr, /bin and /lib stand in for the base image's libraries, and /proc and
 *   /dev are the host's;
 * - each secret volume is a tmpfs of its own with the files copied in, and the service account's token, `ca.crt` and
 *   `namespace` at the kubelet's path, each with the owner, group and mode the kubelet gives it (pod-user.ts);
 *   volumes and token are read-only;
 * - the root is made read-only when the manifest says `readOnlyRootFilesystem`;
 * - it runs in a memory cgroup of its own with the container's memory limit (pod-cgroup.ts);
 * - it runs from the image's WORKDIR with the container's environment alone (`podEnv`), as the user, group and
 *   supplementary groups CRI-O makes of the security context and the image, with the /etc/passwd and /etc/group it
 *   makes (pod-user.ts), with no capability left (the manifest drops ALL) and no-new-privileges when it forbids
 *   escalation;
 * - last, as runc does, its seccomp profile is loaded: RuntimeDefault as CRI-O applies it (pod-seccomp.ts).
 * A manifest that keeps a capability or names another seccomp profile is not modelled: the call throws. So does a
 * pod that would run as root with runAsNonRoot, which the kubelet refuses to start. Each step execs in place: the
 * pid spawned is the server's.
 */
export function podCommand(
  identity: PodIdentity,
  container: PodContainer,
  dir: string,
  security: DeploymentSecurity = deploymentSecurity(),
): PodStart {
  if (!security.dropAllCapabilities || security.addedCapabilities.length > 0) {
    throw new Error('podCommand models a container that drops ALL capabilities and adds none, as manifests/base does');
  }
  if (security.seccompProfile !== 'RuntimeDefault') {
    throw new Error(`podCommand models seccompProfile RuntimeDefault; the manifest has ${security.seccompProfile}`);
  }
  const user = processUser(security, {
    user: `${container.user.user}:${container.user.group}`,
    passwd: PASSWD,
    group: GROUP,
    workingDir: container.workingDir,
    home: container.env.HOME,
  });
  if (security.runAsNonRoot && user.uid === 0) throw new Error('runAsNonRoot, and the container would run as root');
  const seccomp = JSON.stringify(runtimeDefaultSeccomp([]));
  const env = podEnv(identity, container, user.home).map(quote).join(' ');
  const root = mkdtempSync(join(dir, 'pod-root-'));
  const cgroup = podCgroup(`snapshot-webhook-${basename(root)}`, memoryLimitMb() * 2 ** 20);
  const owned = (path: string, { uid, gid, mode }: Ownership): string[] => [
    `chown ${uid}:${gid} ${path}`,
    `chmod ${mode.toString(8)} ${path}`,
  ];
  const bind = (source: string, target: string): string[] => [
    `if [ -d ${quote(source)} ]; then mkdir -p "$root"${quote(target)}; else mkdir -p "$(dirname "$root"${quote(target)})"; touch "$root"${quote(target)}; fi`,
    `mount --bind ${quote(source)} "$root"${quote(target)}`,
    `mount -o bind,remount,ro "$root"${quote(target)}`,
  ];
  const ownership = (entry: 'folder' | 'file' | 'token'): Ownership =>
    volumeOwnership(entry, security.runAsUser, security.fsGroup);
  const volume = (source: string, target: string, token?: string): string[] => [
    `mkdir -p "$root"${quote(target)}`,
    `mount -t tmpfs -o size=1m volume "$root"${quote(target)}`,
    ...owned(`"$root"${quote(target)}`, ownership('folder')),
    `cp ${quote(source)}/* "$root"${quote(target)}/`,
    ...owned(`"$root"${quote(target)}/*`, ownership('file')),
    ...(token === undefined ? [] : owned(`"$root"${quote(`${target}/${token}`)}`, ownership('token'))),
    `mount -o remount,ro "$root"${quote(target)}`,
  ];
  const setpriv = [
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    `--groups=${user.groups.join(',')}`,
    ...(security.noNewPrivileges ? ['--no-new-privs'] : []),
    '--inh-caps=-all',
    '--bounding-set=-all',
  ];
  const script = [
    'set -e',
    `echo $$ > ${quote(cgroup.dir)}/cgroup.procs`,
    `root=${quote(root)}`,
    'mount -t tmpfs -o size=1m,mode=0755 pod-root "$root"',
    `mkdir -p "$root/proc" "$root/dev" "$root/etc" "$root/tmp" "$root"${quote(NONROOT_HOME)}`,
    'chmod 1777 "$root/tmp"',
    // A merged /usr has /bin and /lib as links into it; elsewhere they are folders of their own.
    'for l in bin lib lib64 sbin; do if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$root/$l"; fi; done',
    ...['/usr', '/bin', '/lib', '/lib64', '/sbin'].flatMap((path) => [
      `if [ ! -L ${path} ] && [ -d ${path} ]; then`,
      ...bind(path, path),
      'fi',
    ]),
    'mount --rbind /proc "$root/proc"',
    'mount --rbind /dev "$root/dev"',
    `printf %s ${quote(user.passwd)} > "$root/etc/passwd"`,
    `printf %s ${quote(user.group)} > "$root/etc/group"`,
    ...Object.entries(container.files).flatMap(([target, source]) => bind(source, target)),
    ...Object.entries(container.secrets).flatMap(([target, source]) => volume(source, target)),
    ...volume(identity.secretsDir, SERVICE_ACCOUNT_DIR, 'token'),
    ...(security.readOnlyRoot ? ['mount -o remount,ro "$root"'] : []),
    // The container's PATH has no sbin, where chroot is.
    'chroot=$(PATH="/usr/sbin:/sbin:$PATH" command -v chroot)',
    `exec "$chroot" "$root" /usr/bin/env -i --chdir=${quote(container.workingDir)} ${env} /usr/bin/setpriv ${setpriv.join(' ')} /usr/bin/python3 -I -c ${quote(SECCOMP_LOADER)} ${quote(seccomp)} "$@"`,
  ].join('\n');
  return {
    command: 'unshare',
    args: ['--mount', '--propagation', 'private', 'sh', '-c', script, 'pod', ...container.command],
    cgroup,
  };
}
