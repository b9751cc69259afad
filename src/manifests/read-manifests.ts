import { Composer, LineCounter, Parser } from 'yaml';
import {
  isRecord,
  listItems,
  readManifestFiles,
  type ManifestObject,
  type ManifestProblem,
  type ManifestSet,
} from './manifest-files.js';

export type { ManifestObject, ManifestProblem, ManifestSet };

/** Said with a syntax error in a file that holds `{{`: a template is not a manifest until it is rendered. */
const TEMPLATE_HINT = ' (the file holds `{{`: a template? render it first, or skip it with --exclude)';

const TEMPLATE_PROBLEM =
  'a template, not a manifest: its values hold `{{ }}` template actions; render it first, or skip it with --exclude';

/** A Helm or Go template action: `{{` ... `}}` on one line. */
const TEMPLATE_ACTION = /\{\{.*?\}\}/;

/** The API groups whose objects `validate` checks: only their values decide anything. */
const CHECKED_GROUPS = /^(snapshot|groupsnapshot)\.storage\.k8s\.io\//;

/**
 * Whether a parsed document is a template: its kind or apiVersion holds a template action, or it is an object of
 * the snapshot API groups with a template action in any key or string value. A template whose actions are quoted
 * parses as YAML, but its values are not what will be applied (a name, a driver, an annotation of
 * `{{ .Values.default }}`), so checking it would pass or fail on text that never reaches a cluster. Other kinds are
 * skipped anyway, and some carry `{{ }}` of their own (a PrometheusRule's alert text).
 */
function isTemplate(document: Record<string, unknown>): boolean {
  const { apiVersion, kind } = document;
  if ([apiVersion, kind].some((v) => typeof v === 'string' && TEMPLATE_ACTION.test(v))) return true;
  return typeof apiVersion === 'string' && CHECKED_GROUPS.test(apiVersion) && holdsTemplateActions(document);
}

/** Whether a template action is in any key or string value of a parsed document. */
function holdsTemplateActions(document: unknown): boolean {
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (TEMPLATE_ACTION.test(value)) return true;
    } else if (Array.isArray(value)) {
      pending.push(...(value as unknown[]));
    } else if (isRecord(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (TEMPLATE_ACTION.test(key)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

/**
 * Parses one file's text: multi-document YAML (JSON is YAML), `List` kinds unpacked. A syntax error is a
 * problem of that document, and the other documents are still read.
 */
export function parseManifests(file: string, text: string): ManifestSet {
  const lines = new LineCounter();
  const objects: ManifestObject[] = [];
  const problems: ManifestProblem[] = [];
  // Document by document: each one's syntax tree is garbage once read, so a large file never holds them all.
  const documents = new Composer({ uniqueKeys: false }).compose(new Parser(lines.addNewLine).parse(text), true, text.length);
  for (const doc of documents) {
    const start = doc.contents?.range[0] ?? doc.range[0];
    const line = lines.linePos(start).line;
    if (doc.errors.length > 0) {
      const error = doc.errors[0];
      const at = error === undefined ? line : lines.linePos(error.pos[0]).line;
      const template = text.includes('{{') ? TEMPLATE_HINT : '';
      problems.push({
        file,
        line: at,
        message: `YAML syntax error: ${error?.message.split('\n')[0]?.replace(/:$/, '') ?? 'unreadable'}${template}`,
      });
      continue;
    }
    let value: unknown;
    try {
      // Throws on an alias to another document or more than 100 aliases (a resource exhaustion guard).
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      problems.push({ file, line, message: `YAML cannot be read: ${(error as Error).message}` });
      continue;
    }
    if (value === null || value === undefined) continue;
    if (!isRecord(value)) {
      problems.push({ file, line, message: 'a document must be a Kubernetes object (a mapping)' });
      continue;
    }
    const list = listItems(value);
    if (list === undefined) {
      take({ file, line, object: value }, objects, problems);
      continue;
    }
    const items = doc.getIn(['items']) as { items?: { range?: [number, number, number] }[] } | undefined;
    list.forEach((item: unknown, i: number) => {
      const itemStart = items?.items?.[i]?.range?.[0];
      const itemLine = itemStart === undefined ? line : lines.linePos(itemStart).line;
      if (isRecord(item)) take({ file, line: itemLine, object: item }, objects, problems);
    });
  }
  return { objects, problems };
}

/** An object read from a document or a List item: checked later, or a problem when it is a template. */
function take(found: ManifestObject, objects: ManifestObject[], problems: ManifestProblem[]): void {
  if (isTemplate(found.object)) problems.push({ file: found.file, line: found.line, message: TEMPLATE_PROBLEM });
  else objects.push(found);
}

/**
 * Reads every manifest under the paths, with the line of every document and List item (the `yaml` parser
 * keeps positions): what `snapshot-webhook validate` reports.
 */
export function readManifests(paths: readonly string[], exclude: readonly string[] = []): ManifestSet {
  return readManifestFiles(paths, parseManifests, exclude);
}
