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
      problems.push({
        file,
        line: at,
        message: `YAML syntax error: ${error?.message.split('\n')[0]?.replace(/:$/, '') ?? 'unreadable'}`,
        ...(text.includes('{{') ? { templateMarks: true } : {}),
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
      objects.push({ file, line, object: value });
      continue;
    }
    const items = doc.getIn(['items']) as { items?: { range?: [number, number, number] }[] } | undefined;
    list.forEach((item: unknown, i: number) => {
      const itemStart = items?.items?.[i]?.range?.[0];
      const itemLine = itemStart === undefined ? line : lines.linePos(itemStart).line;
      if (isRecord(item)) objects.push({ file, line: itemLine, object: item });
    });
  }
  return { objects, problems };
}

/**
 * Reads every manifest under the paths, with the line of every document and List item (the `yaml` parser
 * keeps positions): what `snapshot-webhook validate` reports.
 */
export function readManifests(paths: readonly string[], exclude: readonly string[] = []): ManifestSet {
  return readManifestFiles(paths, parseManifests, exclude);
}
