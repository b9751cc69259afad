import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';

/** One Kubernetes object found in a manifest file, with where it was written. */
export interface ManifestObject {
  readonly file: string;
  /** 1-based line of the document (or List item) in the file. */
  readonly line: number;
  readonly object: Record<string, unknown>;
}

export interface ManifestProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export interface ManifestSet {
  readonly objects: ManifestObject[];
  readonly problems: ManifestProblem[];
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** Files under a path: the path itself if it is a file, else every .yaml/.yml/.json below it, sorted. */
export function manifestFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const full = join(path, e.name);
      if (e.isDirectory()) return manifestFiles(full);
      return MANIFEST_FILE.test(e.name) ? [full] : [];
    });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses one file's text: multi-document YAML (JSON is YAML), `List` kinds unpacked. A syntax error is a
 * problem of that document, and the other documents are still read.
 */
export function parseManifests(file: string, text: string): ManifestSet {
  const lines = new LineCounter();
  const objects: ManifestObject[] = [];
  const problems: ManifestProblem[] = [];
  for (const doc of parseAllDocuments(text, { lineCounter: lines, uniqueKeys: false })) {
    const start = doc.contents?.range[0] ?? doc.range[0];
    const line = lines.linePos(start).line;
    if (doc.errors.length > 0) {
      const error = doc.errors[0];
      const at = error?.linePos?.[0]?.line ?? line;
      problems.push({
        file,
        line: at,
        message: `YAML syntax error: ${error?.message.split('\n')[0]?.replace(/:$/, '') ?? 'unreadable'}`,
      });
      continue;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue;
    if (!isRecord(value)) {
      problems.push({ file, line, message: 'a document must be a Kubernetes object (a mapping)' });
      continue;
    }
    if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
      const items = doc.getIn(['items']) as { items?: { range?: [number, number, number] }[] } | undefined;
      value.items.forEach((item: unknown, i: number) => {
        const itemStart = items?.items?.[i]?.range?.[0];
        const itemLine = itemStart === undefined ? line : lines.linePos(itemStart).line;
        if (isRecord(item)) objects.push({ file, line: itemLine, object: item });
      });
      continue;
    }
    objects.push({ file, line, object: value });
  }
  return { objects, problems };
}

/** Reads every manifest under the paths. Unreadable files are problems, not exceptions. */
export function readManifests(paths: readonly string[]): ManifestSet {
  const all: ManifestSet = { objects: [], problems: [] };
  for (const path of paths) {
    let files: string[];
    try {
      files = manifestFiles(path);
    } catch (error) {
      all.problems.push({ file: path, line: 0, message: `cannot read: ${(error as Error).message}` });
      continue;
    }
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        all.problems.push({ file, line: 0, message: `cannot read: ${(error as Error).message}` });
        continue;
      }
      const found = parseManifests(file, text);
      all.objects.push(...found.objects);
      all.problems.push(...found.problems);
    }
  }
  return all;
}
