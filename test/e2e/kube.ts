// The Kubernetes release a run of the end-to-end suite is against, chosen by E2E_KUBE (run.mjs runs the suite once
// per release). Each suite reads what differs from here, never from the version number itself.
import { fileURLToPath } from 'node:url';
import { findControllerCrds, findUpstreamCrds } from '../helpers/tools.mjs';

export interface KubeRelease {
  /** As /version reports it, and as each result line is labelled. */
  readonly version: '1.20.2' | '1.31.14' | '1.36.2';
  /** The tools-folder name of the apiserver binary. */
  readonly apiserverTool: string;
  /** The etcd binary's tool, or undefined for the `etcd` on PATH (Debian's 3.4 serves 1.20). */
  readonly etcdTool: string | undefined;
  /** `--insecure-port=0` (until 1.23) and `--logtostderr` (until 1.26) exist; later releases refuse them. */
  readonly legacyFlags: boolean;
  /** ValidatingAdmissionPolicy (GA in 1.30) and webhook matchConditions (GA in 1.30). */
  readonly admissionPolicies: boolean;
  /** The snapshot-controller that matches this release, and the CRDs it ships with. */
  readonly controllerTool: string;
  /**
   * The CRDs every suite installs: on 1.36 upstream's v8.6.0 CRDs as shipped (CEL rules live); on 1.20 each suite's
   * own choice (1.20 drops the CEL rules it does not know).
   */
  readonly shippedCrds: string | undefined;
  /** The CRDs carry CEL rules that the apiserver enforces before the webhook. */
  readonly celLive: boolean;
  /** The kustomize components of manifests/components that install the webhook on this release (docs/install.md). */
  readonly components: readonly string[];
}

function required(found: { dir?: string; missing?: string }): string {
  if (found.dir === undefined) throw new Error(found.missing);
  return found.dir;
}

/**
 * A release from 1.30 on (CEL, webhook matchConditions and ValidatingAdmissionPolicy GA): upstream's v8.6.0 CRDs as
 * shipped, the v8.6.0 controller, etcd 3.5.
 */
const currentRelease = (version: KubeRelease['version'], apiserverTool: string): KubeRelease => ({
  version,
  apiserverTool,
  etcdTool: 'etcd-3.5',
  legacyFlags: false,
  admissionPolicies: true,
  controllerTool: 'snapshot-controller-8.6',
  shippedCrds: currentCrds(),
  celLive: true,
  components: [],
});

const RELEASES: Record<string, () => KubeRelease> = {
  '1.20': () => ({
    version: '1.20.2',
    apiserverTool: 'kube-apiserver',
    etcdTool: undefined,
    legacyFlags: true,
    admissionPolicies: false,
    controllerTool: 'snapshot-controller',
    shippedCrds: undefined,
    celLive: false,
    components: ['kubernetes-1.20'],
  }),
  // The oldest MicroShift in support (4.18) embeds 1.31; MicroShift 5.0 and main embed 1.36.
  '1.31': () => currentRelease('1.31.14', 'kube-apiserver-1.31'),
  '1.36': () => currentRelease('1.36.2', 'kube-apiserver-1.36'),
};

/** The releases run.mjs runs the suite against, oldest first. */
export const RELEASE_NAMES = Object.keys(RELEASES);

const chosen = process.env.E2E_KUBE ?? '1.20';
const release = RELEASES[chosen];
if (release === undefined) throw new Error(`E2E_KUBE=${chosen}: expected one of ${RELEASE_NAMES.join(', ')}`);
export const kube: KubeRelease = release();

/** The untyped test CRDs (every field kept, nothing checked): on 1.20 every rule is the webhook's to enforce. */
export const UNTYPED_CRDS = fileURLToPath(new URL('./untyped-crds/', import.meta.url));

/** The CRDs that external-snapshotter v8.4.0 ships (the tools folder's `snapshot-controller/crds`). */
export function controllerCrds(): string {
  return required(findControllerCrds());
}

/** Upstream's current CRDs (external-snapshotter v8.6.0, as shipped). */
export function currentCrds(): string {
  return required(findUpstreamCrds());
}
