import { GROUP_SNAPSHOT_API, SNAPSHOT_API } from '../classes/class-kinds.js';
import { classKindOf } from '../classes/static-classes.js';
import type { ManifestObject, ManifestProblem, ManifestSet } from '../manifests/read-manifests.js';

/** A `{{ }}` action on one line: Go's text/template syntax, which Helm and gomplate render and some drivers fill in. */
const ACTION = /\{\{.*?\}\}/g;

/**
 * What only a template engine gives an action, never a CSI driver: Helm's objects (`.Values`, `.Release`, `.Chart`,
 * `.Capabilities`, `.Files`, `.Template`), gomplate's `.Env`, a `$` variable or root, and the engines' own functions.
 * A driver fills in its own fields (aws-ebs-csi-driver: `{{ .VolumeSnapshotNamespace }}`) with plain functions.
 */
const ENGINE_ONLY =
  /\$|(?<![\w.])\.(?:Values|Release|Chart|Capabilities|Files|Template|Env)\b|\b(?:include|tpl|template|required|lookup|getenv|define)\b/;

/** The API groups whose objects `validate` checks: only their values decide anything. */
const CHECKED_GROUPS: readonly string[] = [SNAPSHOT_API.group, GROUP_SNAPSHOT_API.group];

/** Said with a YAML syntax error in a file that holds `{{`: a template is not a manifest until it is rendered. */
const SYNTAX_HINT = ' (the file holds `{{`: a template? render it first, or skip it with --exclude)';

const actionsIn = (text: string): string[] => text.match(ACTION) ?? [];

/** The first action in a string value, where a class parameter's driver-owned actions do not count. */
function actionInValue(value: string, driverValue: boolean): string | undefined {
  return actionsIn(value).find((a) => !driverValue || ENGINE_ONLY.test(a));
}

/** The first template action of a document and where it is, or undefined when the document is not a template. */
export function templateAction(document: Record<string, unknown>): { path: string; action: string } | undefined {
  const { apiVersion, kind } = document;
  for (const [path, value] of Object.entries({ apiVersion, kind })) {
    const action = typeof value === 'string' ? actionsIn(value)[0] : undefined;
    if (action !== undefined) return { path, action };
  }
  if (typeof apiVersion !== 'string' || !CHECKED_GROUPS.includes(apiVersion.split('/')[0] ?? '')) return undefined;
  // A class's `parameters` are opaque to Kubernetes and belong to the driver.
  return firstAction(document, classKindOf(document) !== undefined);
}

/** The first action in a document's keys and string values, depth first in the document's order. */
function firstAction(document: Record<string, unknown>, isClass: boolean): { path: string; action: string } | undefined {
  const pending: [string, unknown][] = [['', document]];
  while (pending.length > 0) {
    const [path, value] = pending.pop() as [string, unknown];
    if (typeof value === 'string') {
      // In a class's parameters an action is the driver's, unless it asks for what only an engine has.
      const action = actionInValue(value, isClass && /^parameters\.[^.]+$/.test(path));
      if (action !== undefined) return { path, action };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const entries = Array.isArray(value)
      ? value.map((item: unknown, i) => [`${path}[${i}]`, '', item] as const)
      : Object.entries(value).map(([key, item]) => [path === '' ? key : `${path}.${key}`, key, item] as const);
    const keyed = entries.find(([, key]) => actionsIn(key).length > 0);
    if (keyed !== undefined) return { path: keyed[0], action: actionsIn(keyed[1])[0] ?? '' };
    for (const [at, , item] of entries.reverse()) pending.push([at, item]);
  }
  return undefined;
}

/**
 * `validate`'s line between a template and a manifest: an object with a template action (templateAction) becomes a
 * problem of its file, and a YAML error in a file that holds `{{` says that the file may be a template. Objects of
 * other kinds are kept whatever they hold (a PrometheusRule's alert text has `{{ }}` of its own).
 */
export function separateTemplates(input: ManifestSet): ManifestSet {
  const objects: ManifestObject[] = [];
  const problems: ManifestProblem[] = input.problems.map((p) =>
    p.templateMarks === true ? { ...p, message: `${p.message}${SYNTAX_HINT}` } : p,
  );
  for (const found of input.objects) {
    const template = templateAction(found.object);
    if (template === undefined) objects.push(found);
    else
      problems.push({
        file: found.file,
        line: found.line,
        message: `a template, not a manifest: ${template.path} holds \`${template.action}\`, which is rendered before apply; render it first, or skip it with --exclude`,
      });
  }
  return { objects, problems };
}
