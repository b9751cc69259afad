// What manifests/base/deployment.yaml says about how the server runs: the suites, the fuzzer and the bench run it
// the same way, read from the manifest (never copied), so a change there is what they measure.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const DEPLOYMENT = fileURLToPath(new URL('../../manifests/base/deployment.yaml', import.meta.url));

/** The pod template's spec. */
function deploymentPod() {
  const docs = parseAllDocuments(readFileSync(DEPLOYMENT, 'utf8')).map((d) => d.toJS());
  return docs.find((d) => d?.kind === 'Deployment').spec.template.spec;
}

/** The Deployment's NODE_OPTIONS. */
export function deploymentNodeOptions() {
  return deploymentEnv().NODE_OPTIONS;
}

/**
 * The container's environment variables that have a value of their own (not from the pod's fields): how the
 * runtime is set, `NODE_OPTIONS` and `GLIBC_TUNABLES`. Every suite that runs the server as it ships sets these.
 */
export function deploymentEnv() {
  const env = deploymentPod().containers[0].env.filter((e) => typeof e.value === 'string');
  return Object.fromEntries(env.map((e) => [e.name, e.value]));
}

/**
 * The Deployment's container arguments, with what differs outside a pod put in: the certificate paths (unless
 * `paths` is undefined: in a pod the secret volume holds them at the manifest's paths) and the port (unless `port`
 * is undefined: in a network namespace of its own the manifest's port is free). Every other flag (`serve`,
 * `--shutdown-delay`, ...) is the manifest's.
 */
export function deploymentArgs(paths, port) {
  return deploymentPod().containers[0].args.map((arg) => {
    if (paths !== undefined && arg.startsWith('--tls-cert-file=')) return `--tls-cert-file=${paths.cert}`;
    if (paths !== undefined && arg.startsWith('--tls-private-key-file=')) return `--tls-private-key-file=${paths.key}`;
    if (port !== undefined && arg.startsWith('--port=')) return `--port=${port}`;
    return arg;
  });
}

/**
 * The container's security settings as the kubelet applies them: the pod's securityContext with the container's
 * over it. `runAsUser` and `runAsGroup` are undefined where the manifest leaves them to the image. `pod` is the pod
 * template's spec, manifests/base/deployment.yaml's unless given (an overlay's, rendered).
 */
export function deploymentSecurity(pod = deploymentPod()) {
  const context = { ...pod.securityContext, ...pod.containers[0].securityContext };
  return {
    runAsUser: context.runAsUser,
    runAsGroup: context.runAsGroup,
    runAsNonRoot: context.runAsNonRoot === true,
    fsGroup: pod.securityContext?.fsGroup,
    supplementalGroups: pod.securityContext?.supplementalGroups ?? [],
    readOnlyRoot: context.readOnlyRootFilesystem === true,
    noNewPrivileges: context.allowPrivilegeEscalation === false,
    dropAllCapabilities: (context.capabilities?.drop ?? []).includes('ALL'),
    addedCapabilities: context.capabilities?.add ?? [],
    seccompProfile: context.seccompProfile?.type,
  };
}

/** The container's secret volumes: the mount path of each, and the secret's name. */
export function deploymentSecretMounts() {
  const pod = deploymentPod();
  return pod.containers[0].volumeMounts.flatMap((mount) => {
    const secret = pod.volumes.find((v) => v.name === mount.name)?.secret;
    return secret === undefined ? [] : [{ mountPath: mount.mountPath, secretName: secret.secretName }];
  });
}

const UNITS = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The container's memory limit in MiB (2^20 bytes), the unit of every RSS figure the suites read from /proc. */
export function memoryLimitMb() {
  const [, value, unit] = /^(\d+)(Ki|Mi|Gi)$/.exec(deploymentPod().containers[0].resources.limits.memory);
  return (Number(value) * UNITS[unit]) / 2 ** 20;
}

/** How long the kubelet waits after SIGTERM before SIGKILL (terminationGracePeriodSeconds), in ms. */
export function gracePeriodMs() {
  return deploymentPod().terminationGracePeriodSeconds * 1000;
}

/** The base with these components of manifests/components, rendered by kubectl kustomize: its objects. */
export function renderedManifests(components) {
  const dir = mkdtempSync(join(tmpdir(), 'sw-render-'));
  try {
    const at = (path) => relative(dir, fileURLToPath(new URL(`../../${path}`, import.meta.url)));
    const kustomization = {
      resources: [at('manifests/base')],
      components: components.map((c) => at(`manifests/components/${c}`)),
    };
    writeFileSync(join(dir, 'kustomization.yaml'), JSON.stringify(kustomization));
    return parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' })).map((d) => d.toJS());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The container's own environment values as the base renders with these components: what a profile such as
 * `single-node` runs with. */
export function renderedEnv(components) {
  const env = renderedManifests(components).find((d) => d?.kind === 'Deployment').spec.template.spec.containers[0].env;
  return Object.fromEntries(env.filter((e) => typeof e.value === 'string').map((e) => [e.name, e.value]));
}
