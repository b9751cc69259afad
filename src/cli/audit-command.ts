import type { KubeConfig } from '@kubernetes/client-node';
import { ClassIndex } from '../classes/class-index.js';
import { CLASS_KIND_FACTS, CLASS_KINDS, type ClassKind } from '../classes/class-kinds.js';
import { flagBool, flagString, formatHelp, parseFlags, UsageError, type FlagSpec } from '../config/flags.js';
import type { ServedVersion } from '../cluster/list-snapshot-objects.js';
import type { Explanation, Found, Obj } from '../explain/snapshot-causes.js';
import type { ManifestObject } from '../manifests/read-manifests.js';
import type { RuleOptions } from '../rules/checks.js';
import { shown } from '../rules/values.js';
import { allRoutes } from '../rules/table.js';
import { checkManifests, type CheckSummary, type ManifestFinding } from './check-manifests.js';
import { exitStatus, FINDING_FLAGS, formatFindings, type OutputFormat } from './format-findings.js';

export const AUDIT_FLAGS: readonly FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', help: 'the cluster to audit (default: $KUBECONFIG, else the in-cluster config)' },
  ...FINDING_FLAGS,
];

const USAGE = 'Usage: snapshot-webhook audit [flags]   (read-only: lists the snapshot objects of a cluster)';

/** The cluster calls an audit makes; a fake in unit tests. */
export interface AuditCluster {
  /** The versions of a group the cluster serves, the apiserver's preferred first; none when not served. */
  servedVersions(group: string): Promise<ServedVersion[]>;
  listPages(target: Target): AsyncIterable<Record<string, unknown>[]>;
  problem(target: Target, error: unknown): string;
  /** Why a snapshot is not ready (explain's cause), or undefined when it is gone by now. */
  explain?(namespace: string, name: string): Promise<Explanation | undefined>;
}

interface Target {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly classKind?: ClassKind;
}

class Audit {
  readonly findings: ManifestFinding[] = [];
  readonly notes: string[] = [];
  private summary: CheckSummary = { checked: 0, denied: 0, warnings: 0, skipped: 0, unreadable: 0 };
  readonly index = ClassIndex.withNoClasses();

  constructor(
    private readonly cluster: AuditCluster,
    private readonly options: RuleOptions,
  ) {}

  totals(): CheckSummary {
    return this.summary;
  }

  private problem(file: string, message: string): void {
    this.findings.push({
      file,
      line: 0,
      kind: '',
      namespace: undefined,
      name: undefined,
      severity: 'error',
      rule: 'cannot-list',
      message,
    });
    this.summary = { ...this.summary, unreadable: this.summary.unreadable + 1 };
  }

  private async add(objects: readonly ManifestObject[]): Promise<void> {
    const result = await checkManifests(objects, new Map(), this.index, this.options);
    // The audit chooses the version it reads at: that version being deprecated says nothing about the object.
    const findings = result.findings.filter((f) => f.rule !== 'deprecated-version');
    this.findings.push(...findings);
    const s = this.summary;
    const warnings = findings.filter((f) => f.severity === 'warning').length;
    this.summary = {
      ...s,
      checked: s.checked + result.summary.checked,
      denied: s.denied + result.summary.denied,
      warnings: s.warnings + warnings,
    };
  }

  /**
   * Each kind of our groups once, at the first version (the apiserver's preferred first) that serves it and that
   * the route table knows: every object is checked once, whatever versions its CRD serves. A kind served only at
   * versions without rules is a problem; a served version without rules whose kinds are read at another is a note.
   */
  async targets(): Promise<Target[]> {
    const routes = [...allRoutes().values()];
    const targets: Target[] = [];
    for (const group of [...new Set(routes.map((r) => r.group))]) {
      let served: ServedVersion[];
      try {
        served = await this.cluster.servedVersions(group);
      } catch (error) {
        this.problem(group, `cannot read which versions of ${group} the cluster serves: ${(error as Error).message}`);
        continue;
      }
      if (served.length === 0) this.notes.push(`${group} is not served by the cluster (CRDs not installed): nothing to check`);
      const ours = routes.filter((r) => r.group === group);
      for (const resource of new Set(served.flatMap((v) => v.resources))) {
        const servedAt = served.filter((v) => v.resources.includes(resource));
        const route = servedAt
          .map((v) => ours.find((r) => r.version === v.version && r.resource === resource))
          .find((r) => r !== undefined);
        if (route !== undefined)
          targets.push({ group, version: route.version, resource, kind: route.kind, classKind: route.classKind });
        else if (ours.some((r) => r.resource === resource))
          this.problem(
            `${group}/${servedAt[0]?.version ?? ''}`,
            `${resource}.${group} is served only at versions this webhook has no rules for`,
          );
      }
      for (const { version } of served.filter((v) => !ours.some((r) => r.version === v.version)))
        this.notes.push(
          `${group}/${version} is served but this webhook has no rules for it: its objects were read at another version`,
        );
    }
    return targets;
  }

  /** Reads one target a page at a time; each page goes to `use`. A failed list is a problem, the rest goes on. */
  private async read(target: Target, use: (objects: ManifestObject[]) => void | Promise<void>): Promise<void> {
    const file = `${target.group}/${target.version}`;
    let count = 0;
    try {
      for await (const page of this.cluster.listPages(target)) {
        count += page.length;
        await use(page.map((object) => ({ file, line: 0, object })));
      }
      this.notes.push(`read ${target.resource}.${target.group} at ${target.version}: ${count} object${count === 1 ? '' : 's'}`);
    } catch (error) {
      const reason = this.cluster.problem(target, error);
      this.problem(file, reason);
      if (target.classKind !== undefined) this.index.setUnavailable(target.classKind, reason);
    }
  }

  async run(): Promise<void> {
    const targets = await this.targets();
    const classTargets = targets.filter((t) => t.classKind !== undefined);
    // Every class first, so the default-class rule sees them all; then each class as a CREATE against the others.
    const classes: ManifestObject[] = [];
    for (const target of classTargets) {
      await this.read(target, (objects) => {
        for (const o of objects) this.index.upsert(target.classKind as ClassKind, o.object as never);
        classes.push(...objects);
      });
    }
    await this.add(classes);
    for (const kind of CLASS_KINDS) this.doubleDefaults(kind);
    for (const target of targets.filter((t) => t.classKind === undefined))
      await this.read(target, async (objects) => {
        await this.add(objects);
        if (target.kind === 'VolumeSnapshot') await this.notReady(objects);
      });
  }

  /** Each snapshot of a page that is not ready to use, with explain's cause, as a warning: it denies nothing. */
  private async notReady(objects: readonly ManifestObject[]): Promise<void> {
    if (this.cluster.explain === undefined) return;
    for (const { file, object } of objects) {
      const { metadata, status } = object as {
        metadata?: { name?: string; namespace?: string };
        status?: { readyToUse?: unknown };
      };
      if (status?.readyToUse === true || metadata?.name === undefined || metadata.namespace === undefined) continue;
      const explanation = await this.cluster.explain(metadata.namespace, metadata.name);
      if (explanation === undefined || explanation.ready) continue;
      this.findings.push({
        file,
        line: 0,
        kind: 'VolumeSnapshot',
        namespace: metadata.namespace,
        name: metadata.name,
        severity: 'warning',
        rule: 'not-ready',
        message: `not ready (${explanation.cause}): ${explanation.message}`,
      });
      this.summary = { ...this.summary, warnings: this.summary.warnings + 1 };
    }
  }

  private doubleDefaults(kind: ClassKind): void {
    for (const [driver, count] of this.index.defaultCounts(kind)) {
      if (count < 2) continue;
      const answer = this.index.defaultsFor(kind, driver);
      const names = answer.ok ? answer.names : [];
      const resource = kind.toLowerCase();
      const { defaultAnnotation } = CLASS_KIND_FACTS[kind];
      this.findings.push({
        file: 'defaults',
        line: 0,
        kind,
        namespace: undefined,
        name: names.map(shown).join(', '),
        severity: 'error',
        rule: 'default-class-unique',
        message:
          `driver ${shown(driver)} has ${count} default ${kind}es: new snapshots that name no class fail; keep one ` +
          `and remove the others' annotation: kubectl annotate ${resource} NAME ${defaultAnnotation}-`,
      });
      this.summary = { ...this.summary, denied: this.summary.denied + 1 };
    }
  }
}

/** The audit against any cluster: findings, notes and the summary (pure but for the cluster's calls). */
export async function auditCluster(
  cluster: AuditCluster,
  options: RuleOptions,
): Promise<{ findings: ManifestFinding[]; notes: string[]; summary: CheckSummary }> {
  const audit = new Audit(cluster, options);
  await audit.run();
  return { findings: audit.findings, notes: audit.notes, summary: audit.totals() };
}

async function realCluster(kubeconfig: string | undefined): Promise<AuditCluster> {
  // Only here: the Kubernetes client is large and slow to load.
  const { loadKubeConfig } = await import('../cluster/client-node-api.js');
  const { listPages, listProblem, servedVersions } = await import('../cluster/list-snapshot-objects.js');
  const { readClasses, readSnapshotWorld } = await import('../cluster/explain-reads.js');
  const { explainSnapshot } = await import('../explain/snapshot-causes.js');
  let kc: KubeConfig;
  let classes: Promise<Found<readonly Obj[]>> | undefined;
  try {
    kc = loadKubeConfig(kubeconfig);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    servedVersions: (group) => servedVersions(kc, group),
    listPages: (target) => listPages(kc, target),
    problem: listProblem,
    explain: async (namespace, name) => {
      // The classes once for the whole audit, when the first snapshot that is not ready needs them.
      classes ??= readClasses(kc);
      const world = await readSnapshotWorld(kc, namespace, name, { classes: () => classes as Promise<Found<readonly Obj[]>> });
      if ('missing' in world) return undefined;
      if ('found' in world) return explainSnapshot(world.found);
      const message = `${world.unknown}: bind the ClusterRole snapshot-webhook-explain to name its cause`;
      return { ready: false, cause: 'cannot-read', message, chain: [] };
    },
  };
}

/** `snapshot-webhook audit`: what the rules would deny if it were created now, and drivers with two defaults. */
export async function runAudit(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(formatHelp(USAGE, AUDIT_FLAGS));
    return 0;
  }
  const flags = parseFlags(AUDIT_FLAGS, argv, {});
  if (flags.positionals.length > 0) throw new UsageError(`audit takes no PATH. ${USAGE}`);
  const { findings, notes, summary } = await auditCluster(await realCluster(flagString(flags, 'kubeconfig')), {
    preventVolumeModeConversion: flagBool(flags, 'prevent-volume-mode-conversion'),
  });
  for (const note of notes) process.stderr.write(`snapshot-webhook audit: ${note}\n`);
  process.stdout.write(formatFindings(flagString(flags, 'output') as OutputFormat, findings, summary));
  return exitStatus(summary);
}
