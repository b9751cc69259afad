// The one place that finds the programs the suites run beyond Node. Two kinds:
// - from package registries (always there in CI): kube-apiserver v1.20.2 (built from Debian's source package) and
//   etcd 3.5 (Debian's), plus data: the CRDs of external-snapshotter v8.4.0 and v8.6.0;
// - optional, built by the user from Kubernetes' and external-snapshotter's own releases: a current kube-apiserver,
//   the snapshot-controllers, upstream's webhooks and vap-check. A test that needs one skips, with one line naming
//   it, when it is absent (README "Optional programs").
// Each program is a file `<folder>/<file>` or `<folder>/<file>.xz` in a tools folder outside the repository:
// $SNAPSHOT_WEBHOOK_TOOLS if set, then the machine's own folder /opt/snapshot-webhook-tools (where a developer
// keeps what they built, outside any clone, so that CI on the same machine runs it too), then the nearest
// `shared/tools` folder above the clone or above the local repository it was cloned from.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** name -> where it lives in a tools folder, what it is, and whether a fresh machine has it. */
export const TOOLS = {
  'kube-apiserver': { folder: 'kube-apiserver', file: 'kube-apiserver-v1.20.2', what: 'kube-apiserver v1.20.2' },
  'etcd-3.5': { folder: 'etcd', file: 'etcd-v3.5.30', what: 'etcd v3.5' },
  'kube-apiserver-1.31': {
    folder: 'kube-apiserver',
    file: 'kube-apiserver-v1.31.14',
    what: 'kube-apiserver v1.31.14',
    optional: true,
  },
  'kube-apiserver-1.36': {
    folder: 'kube-apiserver',
    file: 'kube-apiserver-v1.36.2',
    what: 'kube-apiserver v1.36.2',
    optional: true,
  },
  'snapshot-controller': {
    folder: 'snapshot-controller',
    file: 'snapshot-controller-v8.4.0',
    what: 'snapshot-controller v8.4.0',
    optional: true,
  },
  'snapshot-controller-8.6': {
    folder: 'snapshot-controller',
    file: 'snapshot-controller-v8.6.0',
    what: 'snapshot-controller v8.6.0',
    optional: true,
  },
  'upstream-webhook': {
    folder: 'upstream-webhook',
    file: 'snapshot-validation-webhook-v7.0.2',
    what: 'snapshot-validation-webhook v7.0.2',
    optional: true,
  },
  'upstream-conversion-webhook': {
    folder: 'upstream-conversion-webhook',
    file: 'snapshot-conversion-webhook-v8.6.0',
    what: 'snapshot-conversion-webhook v8.6.0',
    optional: true,
  },
  'vap-check': { folder: 'vap-check', file: 'vap-check', what: 'vap-check', optional: true },
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

/** The machine's own tools folder, outside any clone (README "The tools folder"). */
export const MACHINE_TOOLS = '/opt/snapshot-webhook-tools';

function toolsFolders() {
  return [process.env.SNAPSHOT_WEBHOOK_TOOLS, MACHINE_TOOLS, ...sharedFolders().map((d) => join(d, 'tools'))].filter(Boolean);
}

/** The first of `candidates` that holds `file`, or `{ missing }` naming what and where it was looked for. */
function firstHolding(candidates, file, what, setting) {
  const dir = candidates.find((c) => existsSync(join(c, file)));
  return dir === undefined
    ? { missing: `${what} not found (set ${setting}; looked in ${candidates.slice(0, 3).join(', ')}, ...)` }
    : { dir };
}

/** Upstream's current CRDs (external-snapshotter v8.6.0), or `{ missing }`. */
export function findUpstreamCrds() {
  const candidates = [process.env.SNAPSHOT_WEBHOOK_CRDS, ...sharedFolders().map((d) => join(d, 'crds', 'v8.6.0'))];
  const file = 'snapshot.storage.k8s.io_volumesnapshotclasses.yaml';
  return firstHolding(candidates.filter(Boolean), file, 'the v8.6.0 CRDs', 'SNAPSHOT_WEBHOOK_CRDS');
}

/** The CRDs that external-snapshotter v8.4.0 ships (the tools folder's `snapshot-controller/crds`), or `{ missing }`. */
export function findControllerCrds() {
  const candidates = toolsFolders().map((d) => join(d, 'snapshot-controller', 'crds'));
  const file = 'snapshot.storage.k8s.io_volumesnapshotclasses.yaml';
  return firstHolding(candidates, file, 'the v8.4.0 CRDs', 'SNAPSHOT_WEBHOOK_TOOLS');
}

/** A program of TOOLS as `{ file }` (compressed or not), or `{ missing }` naming it and where it was looked for. */
export function findTool(name) {
  const { folder, file, what } = TOOLS[name];
  for (const dir of toolsFolders().map((d) => join(d, folder))) {
    if (existsSync(join(dir, file))) return { file: join(dir, file) };
    if (existsSync(join(dir, `${file}.xz`))) return { file: join(dir, `${file}.xz`) };
  }
  return {
    missing: `${what} not found (${folder}/${file}[.xz] in $SNAPSHOT_WEBHOOK_TOOLS, ${MACHINE_TOOLS} or shared/tools above the clone)`,
  };
}

/** The first missing program of `names` as one line, or undefined when all are there. */
export function missingTool(...names) {
  return names.map(findTool).find((t) => t.missing !== undefined)?.missing;
}

/** Writes a program to `dest` (a file path in a temporary folder), decompressing it if needed; throws if missing. */
export function unpackTool(name, dest) {
  const tool = findTool(name);
  if (tool.missing) throw new Error(tool.missing);
  if (tool.file.endsWith('.xz')) {
    writeFileSync(dest, execFileSync('xz', ['-dc', tool.file], { maxBuffer: 512 * 1024 * 1024 }));
  } else {
    copyFileSync(tool.file, dest);
  }
  chmodSync(dest, 0o755);
  return dest;
}

/** One line per program: found (where) or missing. For `.ci/run` and the e2e runner to print. */
export function toolReport() {
  return Object.entries(TOOLS).map(([name, { what, optional }]) => {
    const found = findTool(name);
    const kind = optional ? 'optional' : 'required';
    return found.missing === undefined ? `found   ${what} (${kind}): ${found.file}` : `missing ${what} (${kind})`;
  });
}

// `node test/helpers/tools.mjs`: print the report.
if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(toolReport().join('\n'));
