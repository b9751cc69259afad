// The one place that finds the external programs the suites run: the real kube-apiservers (1.20 and 1.36), etcd 3.5,
// the upstream snapshot-controllers (v8.4 and v8.6), the upstream Go webhook, upstream's conversion webhook and
// vap-check (and upstream's current CRDs). Each ships as an xz archive in a tools folder outside the
// repository: $SNAPSHOT_WEBHOOK_TOOLS if set, else the nearest `shared/tools` folder above the clone or above the
// local repository it was cloned from.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** name -> [folder in the tools folder, archive file]. */
export const TOOLS = {
  'kube-apiserver': ['kube-apiserver', 'kube-apiserver-v1.20.2.xz'],
  'kube-apiserver-1.36': ['kube-apiserver', 'kube-apiserver-v1.36.2.xz'],
  'etcd-3.5': ['etcd', 'etcd-v3.5.30.xz'],
  'snapshot-controller': ['snapshot-controller', 'snapshot-controller-v8.4.0.xz'],
  'snapshot-controller-8.6': ['snapshot-controller', 'snapshot-controller-v8.6.0.xz'],
  'upstream-conversion-webhook': ['upstream-conversion-webhook', 'snapshot-conversion-webhook-v8.6.0.xz'],
  'upstream-webhook': ['upstream-webhook', 'snapshot-validation-webhook-v7.0.2.xz'],
  'vap-check': ['vap-check', 'vap-check.xz'],
};

/** `shared` in `dir` and in each folder above it. */
function above(dir) {
  const found = [];
  for (;;) {
    found.push(join(dir, 'shared'));
    const parent = dirname(dir);
    if (parent === dir) return found;
    dir = parent;
  }
}

/** The folder a local clone was cloned from (CI clones the working copy into a temporary folder). */
function originFolder(root) {
  try {
    const url = execFileSync('git', ['-C', root, 'remote', 'get-url', 'origin'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return isAbsolute(url) ? url : url.startsWith('file://') ? fileURLToPath(url) : undefined;
  } catch {
    return undefined;
  }
}

/** The folders that may hold the shared tools and CRDs, nearest first. */
function sharedFolders() {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const origin = originFolder(root);
  return [...above(root), ...(origin === undefined ? [] : above(origin))];
}

function toolsFolders() {
  return [process.env.SNAPSHOT_WEBHOOK_TOOLS, ...sharedFolders().map((d) => join(d, 'tools'))].filter(Boolean);
}

/** Upstream's current CRDs (external-snapshotter v8.6.0), or undefined with where they were looked for. */
export function findUpstreamCrds() {
  const candidates = [process.env.SNAPSHOT_WEBHOOK_CRDS, ...sharedFolders().map((d) => join(d, 'crds', 'v8.6.0'))].filter(
    Boolean,
  );
  const dir = candidates.find((c) => existsSync(join(c, 'snapshot.storage.k8s.io_volumesnapshotclasses.yaml')));
  return dir === undefined
    ? {
        missing: `the v8.6.0 CRDs were not found (set SNAPSHOT_WEBHOOK_CRDS; looked in ${candidates.slice(0, 3).join(', ')}, ...)`,
      }
    : { dir };
}

/** The folder of a tool (its README, CRDs and archive), or undefined with where it was looked for. */
export function findTool(name) {
  const [folder, archive] = TOOLS[name];
  const candidates = toolsFolders().map((d) => join(d, folder));
  const dir = candidates.find((c) => existsSync(join(c, archive)));
  return dir === undefined
    ? { missing: `${archive} not found (set SNAPSHOT_WEBHOOK_TOOLS; looked in ${candidates.slice(0, 3).join(', ')}, ...)` }
    : { dir, archive: join(dir, archive) };
}

/** Decompresses a tool's binary to `dest` (a file path in a temporary folder) and returns it; throws if missing. */
export function unpackTool(name, dest) {
  const tool = findTool(name);
  if (tool.missing) throw new Error(tool.missing);
  writeFileSync(dest, execFileSync('xz', ['-dc', tool.archive], { maxBuffer: 512 * 1024 * 1024 }));
  chmodSync(dest, 0o755);
  return dest;
}
