import type { ClassIndex } from '../classes/class-index.js';
import { classKindOf } from '../classes/static-classes.js';
import type { ManifestObject } from '../manifests/read-manifests.js';
import type { RuleOptions } from '../rules/checks.js';
import { decide } from '../rules/decide.js';
import { isDefaultClass } from '../rules/default-class.js';
import { evaluate } from '../rules/evaluate.js';
import type { RuleId } from '../rules/finding.js';
import { findRouteByKind } from '../rules/table.js';
import type { SnapshotClass } from '../schemas/types.js';

export interface ManifestFinding {
  readonly file: string;
  readonly line: number;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly severity: 'error' | 'warning';
  readonly rule: RuleId | 'yaml-syntax';
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

function metaOf(object: Record<string, unknown>): { name?: string; namespace?: string } {
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
export function checkManifests(
  objects: readonly ManifestObject[],
  old: ReadonlyMap<string, ManifestObject>,
  existing: ClassIndex,
  options: RuleOptions,
): CheckResult {
  const findings: ManifestFinding[] = [];
  const definedAt = new Map<string, ManifestObject>();
  let checked = 0;
  let denied = 0;
  let skipped = 0;
  const ordered = [...objects].sort(
    (a, b) => Number(classKindOf(b.object) !== undefined) - Number(classKindOf(a.object) !== undefined),
  );
  for (const item of ordered) {
    const { object } = item;
    const route = findRouteByKind(String(object.apiVersion), String(object.kind));
    if (route === undefined) {
      skipped += 1;
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
    const evaluation = evaluate(request, existing, options);
    const decision = decide(evaluation.findings);
    const { name, namespace } = metaOf(object);
    const at = { file: item.file, line: item.line, kind: route.kind, namespace, name };
    if (!decision.allowed && decision.denial !== undefined) {
      denied += 1;
      const first =
        decision.denial.rule === 'default-class-unique' ? firstDefinition(decision.denial.message, route.kind, definedAt) : '';
      findings.push({ ...at, severity: 'error', rule: decision.denial.rule, message: decision.denial.message + first });
    }
    // Offline, every problem is reported as itself: a second denial is an error too, not an "also" warning.
    for (const f of evaluation.findings) {
      if (f !== decision.denial)
        findings.push({ ...at, severity: f.warning === true ? 'warning' : 'error', rule: f.rule, message: f.message });
    }
    const classKind = route.classKind;
    if (classKind !== undefined && decision.allowed && route.decode(object)) {
      existing.upsert(classKind, object as SnapshotClass);
      if (isDefaultClass(classKind, object as SnapshotClass) && name !== undefined) definedAt.set(`${classKind}/${name}`, item);
    }
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  const warnings = findings.filter((f) => f.severity === 'warning').length;
  return { findings, summary: { checked, denied, warnings, skipped, unreadable: 0 } };
}

/** ` (first default at FILE:LINE)` when the class a denial names was itself written in the input. */
function firstDefinition(message: string, kind: string, definedAt: ReadonlyMap<string, ManifestObject>): string {
  const match = /class: (.+) already exists for driver/.exec(message);
  const where = match?.[1] === undefined ? undefined : definedAt.get(`${kind}/${match[1]}`);
  return where === undefined ? '' : ` (defined at ${where.file}:${where.line})`;
}
