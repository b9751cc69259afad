import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ClassIndex } from '../classes/class-index.js';
import { loadStaticClasses } from '../classes/static-classes.js';
import { flagBool, flagList, flagString, formatHelp, parseFlags, UsageError, type FlagSpec } from '../config/flags.js';
import { readBounded } from '../manifests/manifest-files.js';
import { parseManifests, readManifests, type ManifestObject, type ManifestSet } from '../manifests/read-manifests.js';
import { checkManifests, metaOf, objectKey, type ManifestFinding } from './check-manifests.js';
import { separateTemplates } from './template-check.js';
import { exitStatus, FINDING_FLAGS, formatFindings, type OutputFormat } from './format-findings.js';

const VALIDATE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'old',
    type: 'string',
    help: 'manifests of the objects as they are now: each input object is checked as an UPDATE of its namesake',
  },
  {
    name: 'classes-from',
    type: 'string',
    help: 'file or folder of classes that already exist (for example an export of the cluster)',
  },
  {
    name: 'cluster',
    type: 'bool',
    help: 'read the existing classes from the cluster of $KUBECONFIG (or --kubeconfig; loads the Kubernetes client)',
  },
  {
    name: 'kubeconfig',
    type: 'string',
    help: 'read the existing classes from the cluster of this kubeconfig (implies --cluster)',
  },
  {
    name: 'skip-unknown',
    type: 'bool',
    help: 'skip objects of the snapshot API groups whose kind or version this webhook does not know, instead of exit 2',
  },
  {
    name: 'exclude',
    type: 'list',
    help: 'skip files and folders whose path (as found under PATH) matches this glob, e.g. `**/templates` for Helm charts; repeatable',
  },
  { name: 'kustomize', type: 'string', help: 'also check what `kubectl kustomize DIR` renders' },
  ...FINDING_FLAGS,
];

const USAGE = 'Usage: snapshot-webhook validate [flags] PATH... (files, folders, or - for stdin)';

function readInputs(paths: readonly string[], exclude: readonly string[]): ManifestSet {
  const all: ManifestSet = { objects: [], problems: [] };
  const files = paths.filter((p) => p !== '-');
  const fromFiles = readManifests(files, exclude);
  all.objects.push(...fromFiles.objects);
  all.problems.push(...fromFiles.problems);
  if (paths.includes('-')) {
    const read = readBounded(0);
    const fromStdin =
      'problem' in read
        ? { objects: [], problems: [{ file: '<stdin>', line: 0, message: read.problem }] }
        : parseManifests('<stdin>', read.text);
    all.objects.push(...fromStdin.objects);
    all.problems.push(...fromStdin.problems);
  }
  return all;
}

const ORIGIN = 'config.kubernetes.io/origin';

/** The kustomization file of a folder, for findings kustomize cannot trace to a source file. */
function kustomizationFile(dir: string): string {
  const name = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].find((n) => existsSync(join(dir, n)));
  return join(dir, name ?? 'kustomization.yaml');
}

/**
 * Where a rendered object came from: with `buildMetadata: [originAnnotations]` kustomize names the source file,
 * and the object's line there is found by kind, namespace and name; else the kustomization file. Each source
 * file is read once, however many objects it holds.
 */
function sourceFinder(dir: string): (rendered: ManifestObject) => { file: string; line: number } {
  const fallback = { file: kustomizationFile(dir), line: 0 };
  const sources = new Map<string, ManifestObject[]>();
  return (rendered) => {
    const metadata = rendered.object.metadata as { annotations?: Record<string, unknown> } | undefined;
    const origin = metadata?.annotations?.[ORIGIN];
    const path = typeof origin === 'string' ? /^path: *(.+)$/m.exec(origin)?.[1]?.trim() : undefined;
    if (path === undefined) return fallback;
    const file = join(dir, path);
    const objects = sources.get(file) ?? readManifests([file]).objects;
    sources.set(file, objects);
    // kustomize may set the namespace: match on kind and name, and on the namespace only where the source has one.
    const [kind, namespace, name] = objectKey(rendered.object).split('/');
    const found = objects.find((o) => {
      const [k, ns, n] = objectKey(o.object).split('/');
      return k === kind && n === name && (ns === '' || ns === namespace);
    });
    return { file, line: found?.line ?? 0 };
  };
}

function renderKustomize(dir: string): ManifestSet {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error !== undefined) throw new UsageError(`--kustomize needs kubectl on the PATH: ${result.error.message}`);
  if (result.status !== 0) {
    const problem = { file: kustomizationFile(dir), line: 0, message: `kubectl kustomize failed: ${result.stderr.trim()}` };
    return { objects: [], problems: [problem] };
  }
  const rendered = parseManifests(`${dir} (kustomize output)`, result.stdout);
  const sourceOf = sourceFinder(dir);
  return { objects: rendered.objects.map((o) => ({ ...o, ...sourceOf(o) })), problems: rendered.problems };
}

async function existingClasses(
  classesFrom: string | undefined,
  fromCluster: boolean,
  kubeconfig: string | undefined,
): Promise<ClassIndex> {
  const index = ClassIndex.withNoClasses();
  if (classesFrom !== undefined) {
    try {
      loadStaticClasses(classesFrom, index);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  if (fromCluster) {
    // Only here: the Kubernetes client is large and slow to load, and most runs never need it.
    const { listClusterClasses } = await import('../cluster/list-classes.js');
    const which = kubeconfig ?? (process.env.KUBECONFIG || 'the in-cluster config');
    try {
      await listClusterClasses(kubeconfig, index);
    } catch (error) {
      // The existing classes are input too: not being able to read them is exit 2, like an unreadable file.
      throw new UsageError(`cluster of ${which}: cannot read the existing classes: ${(error as Error).message}`);
    }
  }
  return index;
}

/**
 * With a cluster: the objects whose kind the cluster serves at their version, and a finding for each other one
 * (kubectl would refuse it), naming the versions it does serve. Without a cluster a deprecated version is a warning.
 */
async function servedByCluster(
  objects: readonly ManifestObject[],
  kubeconfig: string | undefined,
): Promise<{ served: ManifestObject[]; unserved: ManifestFinding[] }> {
  const { servedSnapshotKinds, notServed } = await import('../cluster/served-kinds.js');
  let kinds;
  try {
    kinds = await servedSnapshotKinds(kubeconfig);
  } catch (error) {
    throw new UsageError(`cannot read which snapshot kinds the cluster serves: ${(error as Error).message}`);
  }
  const served: ManifestObject[] = [];
  const unserved: ManifestFinding[] = [];
  for (const item of objects) {
    const kind = String(item.object.kind);
    const why = notServed(kinds, String(item.object.apiVersion), kind);
    if (why === undefined) served.push(item);
    else {
      const { name, namespace } = metaOf(item.object);
      unserved.push({
        file: item.file,
        line: item.line,
        kind,
        namespace,
        name,
        severity: 'error',
        rule: 'unknown-kind',
        message: why,
      });
    }
  }
  return { served, unserved };
}

export async function runValidate(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(formatHelp(USAGE, VALIDATE_FLAGS));
    return 0;
  }
  const flags = parseFlags(VALIDATE_FLAGS, argv, {});
  const kustomize = flagString(flags, 'kustomize');
  if (flags.positionals.length === 0 && kustomize === undefined) throw new UsageError(`no PATH given. ${USAGE}`);
  const input = readInputs(flags.positionals, flagList(flags, 'exclude'));
  if (kustomize !== undefined) {
    const rendered = renderKustomize(kustomize);
    input.objects.push(...rendered.objects);
    input.problems.push(...rendered.problems);
  }
  const checked = separateTemplates(input);
  const oldPath = flagString(flags, 'old');
  const old = oldPath === undefined ? { objects: [], problems: [] } : readManifests([oldPath]);
  checked.problems.push(...old.problems);
  const kubeconfig = flagString(flags, 'kubeconfig');
  const fromCluster = flagBool(flags, 'cluster') || kubeconfig !== undefined;
  const existing = await existingClasses(flagString(flags, 'classes-from'), fromCluster, kubeconfig);
  const { served, unserved } = fromCluster
    ? await servedByCluster(checked.objects, kubeconfig)
    : { served: checked.objects, unserved: [] };
  const result = await checkManifests(
    served,
    new Map(old.objects.map((o) => [objectKey(o.object), o])),
    existing,
    { preventVolumeModeConversion: flagBool(flags, 'prevent-volume-mode-conversion') },
    flagBool(flags, 'skip-unknown') ? 'skip' : 'report',
  );
  const unreadable: ManifestFinding[] = checked.problems.map((p) => ({
    file: p.file,
    line: p.line,
    kind: '',
    namespace: undefined,
    name: undefined,
    severity: 'error',
    rule: 'yaml-syntax',
    message: p.message,
  }));
  const findings = [...unreadable, ...unserved, ...result.findings].sort(
    (a, b) => a.file.localeCompare(b.file) || a.line - b.line,
  );
  const summary = { ...result.summary, unreadable: result.summary.unreadable + unreadable.length + unserved.length };
  process.stdout.write(formatFindings(flagString(flags, 'output') as OutputFormat, findings, summary));
  return exitStatus(summary);
}
