import type { ClassIndex } from '../classes/class-index.js';
import type { ClassKind } from '../classes/class-kinds.js';
import { isDefaultClass } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import { classKindOf } from '../classes/static-classes.js';
import type { ManifestObject } from '../manifests/read-manifests.js';
import type { RuleOptions } from '../rules/checks.js';
import type { Finding, RuleId } from '../rules/finding.js';
import { decideRequest } from '../rules/decide-request.js';
import { ENFORCE_ALL } from '../rules/decide.js';
import type { AdmittedClass } from '../rules/default-claim.js';
import { findRouteByKind } from '../rules/table.js';
import { unknownKind } from './unknown-kind.js';

export interface ManifestFinding {
  readonly file: string;
  readonly line: number;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly severity: 'error' | 'warning';
  /**
   * A rule, or why an input could not be checked: a file (`yaml-syntax`), a cluster list (`cannot-list`), or
   * an object of our groups whose kind or version has no rules here (`unknown-kind`); or, from `audit`, a snapshot
   * that is not ready to use (`not-ready`, a warning with explain's cause).
   */
  readonly rule: RuleId | 'yaml-syntax' | 'cannot-list' | 'unknown-kind' | 'not-ready';
  readonly message: string;
}

export interface CheckSummary {
  readonly checked: number;
  readonly denied: number;
  readonly warnings: number;
  readonly skipped: number;
  readonly unreadable: number;
}

export interface CheckResult {
  readonly findings: ManifestFinding[];
  readonly summary: CheckSummary;
}

/** An object's name and namespace, where they are strings. */
export function metaOf(object: Record<string, unknown>): { name?: string; namespace?: string } {
  const metadata = object.metadata;
  if (typeof metadata !== 'object' || metadata === null) return {};
  const { name, namespace } = metadata as Record<string, unknown>;
  return {
    ...(typeof name === 'string' ? { name } : {}),
    ...(typeof namespace === 'string' ? { namespace } : {}),
  };
}

/** kind/namespace/name, how an object in OLD_PATH is matched to its new version. */
export function objectKey(object: Record<string, unknown>): string {
  const { name, namespace } = metaOf(object);
  return `${String(object.kind)}/${namespace ?? ''}/${name ?? ''}`;
}

/**
 * Runs the server's rules over manifests as CREATEs (or UPDATEs of the same object in `old`). Classes go
 * first, so that the default-class rule sees every class in the input and the classes that already exist
 * (`existing`), and a second default anywhere in the input is reported with where the first was written.
 */
export async function checkManifests(
  objects: readonly ManifestObject[],
  old: ReadonlyMap<string, ManifestObject>,
  existing: ClassIndex,
  options: RuleOptions,
  unknown: 'report' | 'skip' = 'report',
): Promise<CheckResult> {
  const findings: ManifestFinding[] = [];
  const definedAt = new Map<string, ManifestObject>();
  /** Classes of the input that the rules denied: a snapshot naming one is told so, not "does not exist". */
  const deniedClasses = new Map<string, ManifestObject>();
  let checked = 0;
  let denied = 0;
  let skipped = 0;
  let unknownKinds = 0;
  const ordered = [...objects].sort(
    (a, b) => Number(classKindOf(b.object) !== undefined) - Number(classKindOf(a.object) !== undefined),
  );
  for (const [index, item] of ordered.entries()) {
    const { object } = item;
    const route = findRouteByKind(String(object.apiVersion), String(object.kind));
    if (route === undefined) {
      const why = unknown === 'report' ? unknownKind(String(object.apiVersion), String(object.kind)) : undefined;
      if (why === undefined) skipped += 1;
      else {
        unknownKinds += 1;
        const { name, namespace } = metaOf(object);
        const at = { file: item.file, line: item.line, kind: String(object.kind), namespace, name };
        findings.push({ ...at, severity: 'error', rule: 'unknown-kind', message: why });
      }
      continue;
    }
    checked += 1;
    const previous = old.get(objectKey(object));
    const operation = previous === undefined ? 'CREATE' : 'UPDATE';
    const request = {
      operation,
      resource: { group: route.group, version: route.version, resource: route.resource },
      object,
      oldObject: previous?.object,
    };
    // Every class the input admits counts for the objects after it, as in a cluster.
    const admitted = ({ kind, object: admittedClass, becomesDefault }: AdmittedClass): void => {
      existing.upsert(kind, admittedClass);
      const admittedName = admittedClass.metadata.name;
      if (becomesDefault && admittedName !== undefined) definedAt.set(`${kind}/${admittedName}`, item);
    };
    const { evaluation, decision } = await decideRequest(request, { classes: existing, options, modes: ENFORCE_ALL, admitted });
    const { name, namespace } = metaOf(object);
    const at = { file: item.file, line: item.line, kind: route.kind, namespace, name };
    if (!decision.allowed && decision.denial !== undefined) {
      denied += 1;
      const first =
        firstDefinition(decision.denial.conflictsWith, route.kind, definedAt) +
        removedLater(decision.denial.conflictsWith, route.classKind, ordered.slice(index + 1));
      if (route.classKind !== undefined && name !== undefined) deniedClasses.set(`${route.classKind}/${name}`, item);
      findings.push({ ...at, severity: 'error', rule: decision.denial.rule, message: decision.denial.message + first });
    }
    // Offline, every problem is reported as itself: a second denial is an error too, not an "also" warning.
    const others = evaluation.findings.filter((f) => f !== decision.denial);
    findings.push(...others.map((f) => asManifestFinding(f, at, deniedClasses)));
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  const warnings = findings.filter((f) => f.severity === 'warning').length;
  return { findings, summary: { checked, denied, warnings, skipped, unreadable: unknownKinds } };
}

type Place = Pick<ManifestFinding, 'file' | 'line' | 'kind' | 'namespace' | 'name'>;

function asManifestFinding(f: Finding, at: Place, deniedClasses: ReadonlyMap<string, ManifestObject>): ManifestFinding {
  const message = deniedInInput(f, deniedClasses) ?? f.message;
  return { ...at, severity: f.warning === true ? 'warning' : 'error', rule: f.rule, message };
}

/** For a snapshot naming a class that this input holds but the rules denied: where, and that it must be fixed. */
function deniedInInput(finding: Finding, deniedClasses: ReadonlyMap<string, ManifestObject>): string | undefined {
  const missing = finding.missingClass;
  const where = missing === undefined ? undefined : deniedClasses.get(`${missing.kind}/${missing.name}`);
  if (missing === undefined || where === undefined) return undefined;
  return `${missing.kind} ${missing.name} is in this input but would be denied (${where.file}:${where.line}); the snapshot waits until it exists`;
}

/**
 * When the default a denial names is removed by a later document of the input: kubectl applies in order, so as
 * written this class is denied, that one stops being the default, and the driver is left with none.
 */
function removedLater(conflictsWith: string | undefined, kind: ClassKind | undefined, later: readonly ManifestObject[]): string {
  if (conflictsWith === undefined || kind === undefined) return '';
  const removal = later.find(
    (o) =>
      classKindOf(o.object) === kind &&
      metaOf(o.object).name === conflictsWith &&
      !isDefaultClass(kind, o.object as SnapshotClass),
  );
  if (removal === undefined) return '';
  const where = `${removal.file}:${removal.line}`;
  return (
    `; this input removes that default later (${where}), and kubectl applies in order: as written, this class is ` +
    `denied and the driver is left with no default. Put ${where} before this document, or apply it first`
  );
}

/** ` (defined at FILE:LINE)` when the class a denial names was itself written in the input. */
function firstDefinition(
  conflictsWith: string | undefined,
  kind: string,
  definedAt: ReadonlyMap<string, ManifestObject>,
): string {
  const where = conflictsWith === undefined ? undefined : definedAt.get(`${kind}/${conflictsWith}`);
  return where === undefined ? '' : ` (defined at ${where.file}:${where.line})`;
}
