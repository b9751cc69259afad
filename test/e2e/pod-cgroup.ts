// The container's memory limit, enforced as the kubelet enforces it: a memory cgroup of the pod's own with the
// limit, which the pod's process joins before it execs the server. The kernel charges it the process's memory, its
// page cache and its kernel memory, reclaims what it can at the limit and then OOM-kills the process, as in a pod.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PodCgroup {
  /** The cgroup's folder; a process joins it by writing its pid to `cgroup.procs` there. */
  readonly dir: string;
  /** The limit in bytes, as the kernel reports it. */
  limitBytes(): number;
  /** The highest usage the kernel has charged to it, in bytes (undefined where the kernel does not keep it). */
  peakBytes(): number | undefined;
  /** Removes the cgroup once its process has exited. */
  remove(): void;
}

const V2_ROOT = '/sys/fs/cgroup';
const V1_MEMORY = '/sys/fs/cgroup/memory';

/** This process's cgroup path in the hierarchy whose line in /proc/self/cgroup `matches`. */
function ownPath(matches: (controllers: string, hierarchy: string) => boolean): string {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n')) {
    const [hierarchy = '', controllers = '', path = '/'] = line.split(':');
    if (matches(controllers, hierarchy)) return path;
  }
  throw new Error('no memory cgroup for this process in /proc/self/cgroup');
}

const readNumber = (file: string): number | undefined =>
  existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined;

/**
 * A new memory cgroup named `name` limited to `limitBytes`: under this process's own memory cgroup with cgroup v1
 * (the limit holds under whatever limit that one has), at the root with cgroup v2, where a cgroup that has
 * processes cannot hand controllers to new children. Throws, saying why, where neither can be made (not root).
 */
export function podCgroup(name: string, limitBytes: number): PodCgroup {
  const v2 = existsSync(join(V2_ROOT, 'cgroup.controllers'));
  if (v2 && !readFileSync(join(V2_ROOT, 'cgroup.subtree_control'), 'utf8').split(' ').includes('memory')) {
    throw new Error('cgroup v2: the root cgroup does not hand the memory controller to its children');
  }
  const dir = v2
    ? join(V2_ROOT, name)
    : join(
        V1_MEMORY,
        ownPath((c) => c.split(',').includes('memory')),
        name,
      );
  const limitFile = join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes');
  mkdirSync(dir);
  writeFileSync(limitFile, String(limitBytes));
  // No swap for the pod, as the kubelet leaves it by default; where the kernel has no swap, the file is absent.
  const swap = join(dir, v2 ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes');
  if (existsSync(swap)) writeFileSync(swap, v2 ? '0' : String(limitBytes));
  return {
    dir,
    limitBytes: () => readNumber(limitFile) as number,
    peakBytes: () => readNumber(join(dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes')),
    remove: () => rmdirSync(dir),
  };
}
