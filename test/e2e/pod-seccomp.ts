// The pod's `seccompProfile: RuntimeDefault`, as CRI-O (MicroShift's and OpenShift's runtime) applies it: the
// default profile of containers/common, which Debian's golang-github-containers-common installs at
// /usr/share/containers/seccomp.json, turned into the OCI runtime spec's `linux.seccomp` for this machine's
// architecture and the container's capabilities, the way containers/common's `setupSeccomp` does (with moby's
// reading of `minKernel`, which that profile does not use). seccomp-exec.py loads the result as runc would.
import { existsSync, readFileSync } from 'node:fs';
import { arch, release } from 'node:os';

/** Where containers/common's default profile is installed (CRI-O and podman read it there). */
export const RUNTIME_DEFAULT_PROFILE = '/usr/share/containers/seccomp.json';

interface Conditions {
  readonly arches?: readonly string[] | null;
  readonly caps?: readonly string[] | null;
  readonly minKernel?: string | null;
}

export interface SeccompArg {
  readonly index: number;
  readonly value: number;
  readonly valueTwo?: number;
  readonly op: string;
}

/** A profile in containers/common's (and moby's) format. */
export interface SeccompProfile {
  readonly defaultAction: string;
  readonly defaultErrnoRet?: number | null;
  readonly archMap?: readonly { readonly architecture: string; readonly subArchitectures: readonly string[] }[] | null;
  readonly syscalls: readonly {
    readonly names: readonly string[];
    readonly action: string;
    readonly errnoRet?: number | null;
    readonly args?: readonly SeccompArg[] | null;
    readonly includes?: Conditions | null;
    readonly excludes?: Conditions | null;
  }[];
}

/** The OCI runtime spec's `linux.seccomp`, what runc loads. */
export interface OciSeccomp {
  readonly defaultAction: string;
  readonly defaultErrnoRet?: number;
  readonly architectures: readonly string[];
  readonly syscalls: readonly {
    readonly names: readonly string[];
    readonly action: string;
    readonly errnoRet?: number;
    readonly args: readonly SeccompArg[];
  }[];
}

/** Node's names for architectures, as Go's (the profile's `arches`), and as libseccomp's (its `archMap`). */
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64', s390x: 's390x', ppc64: 'ppc64le' };
const SECCOMP_ARCH: Readonly<Record<string, string>> = {
  amd64: 'SCMP_ARCH_X86_64',
  arm64: 'SCMP_ARCH_AARCH64',
  s390x: 'SCMP_ARCH_S390X',
  ppc64le: 'SCMP_ARCH_PPC64LE',
};

/** `a.b` of a kernel release or a profile's minKernel, compared as numbers. */
function kernelAtLeast(kernel: string, minimum: string): boolean {
  const [major = 0, minor = 0] = kernel.split(/[.-]/).map(Number);
  const [wantMajor = 0, wantMinor = 0] = minimum.split('.').map(Number);
  return major > wantMajor || (major === wantMajor && minor >= wantMinor);
}

/** The container a profile's conditions are read against. */
interface Target {
  readonly goArch: string;
  readonly capabilities: readonly string[];
  readonly kernel: string;
}

/** A rule's `includes` hold: its architecture (if named), every capability it names held, a recent kernel. */
const included = ({ arches, caps, minKernel }: Conditions, to: Target): boolean =>
  (!arches?.length || arches.includes(to.goArch)) &&
  (caps ?? []).every((c) => to.capabilities.includes(c)) &&
  (!minKernel || kernelAtLeast(to.kernel, minKernel));

/** A rule's `excludes` hold: its architecture named, any capability it names held, or a kernel at the minimum. */
const excluded = ({ arches, caps, minKernel }: Conditions, to: Target): boolean =>
  (arches ?? []).includes(to.goArch) ||
  (caps ?? []).some((c) => to.capabilities.includes(c)) ||
  (!!minKernel && kernelAtLeast(to.kernel, minKernel));

/**
 * The filter a profile gives a container on `goArch` with the bounding set `capabilities` under `kernel`: the
 * native architecture and its sub-architectures from `archMap`; each rule kept unless its `excludes` match (an
 * excluded architecture, any excluded capability held, a kernel at or past the excluded minimum) or its
 * `includes` do not (another architecture, an included capability not held, an older kernel).
 */
export function ociSeccomp(profile: SeccompProfile, goArch: string, capabilities: readonly string[], kernel: string): OciSeccomp {
  const native = SECCOMP_ARCH[goArch];
  if (native === undefined) throw new Error(`seccomp: no libseccomp architecture known for ${goArch}`);
  const mapped = (profile.archMap ?? []).find((a) => a.architecture === native);
  const to = { goArch, capabilities, kernel };
  const kept = profile.syscalls.filter(({ includes, excludes }) => !excluded(excludes ?? {}, to) && included(includes ?? {}, to));
  return {
    defaultAction: profile.defaultAction,
    ...(profile.defaultErrnoRet == null ? {} : { defaultErrnoRet: profile.defaultErrnoRet }),
    architectures: mapped === undefined ? [] : [mapped.architecture, ...mapped.subArchitectures],
    syscalls: kept.map((call) => ({
      names: call.names,
      action: call.action,
      ...(call.errnoRet == null ? {} : { errnoRet: call.errnoRet }),
      args: call.args ?? [],
    })),
  };
}

/** RuntimeDefault for a container with the bounding set `capabilities`, on this machine. */
export function runtimeDefaultSeccomp(capabilities: readonly string[]): OciSeccomp {
  if (!existsSync(RUNTIME_DEFAULT_PROFILE)) {
    throw new Error(
      `seccomp: ${RUNTIME_DEFAULT_PROFILE} is missing: the pod's RuntimeDefault profile comes from Debian's ` +
        'golang-github-containers-common (apt-get install --no-install-recommends golang-github-containers-common python3-seccomp)',
    );
  }
  const goArch = GO_ARCH[arch()] ?? arch();
  const profile = JSON.parse(readFileSync(RUNTIME_DEFAULT_PROFILE, 'utf8')) as SeccompProfile;
  return ociSeccomp(profile, goArch, capabilities, release());
}

/** The loader, run as `python3 -I -c LOADER FILTER_JSON COMMAND ARGS...` (Debian's python3 and python3-seccomp). */
export const SECCOMP_LOADER = readFileSync(new URL('seccomp-exec.py', import.meta.url), 'utf8');
