import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

/** Parses one file's text into objects and problems. */
export type ManifestParser = (file: string, text: string) => ManifestSet;

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

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A `List` kind (`v1/List`, `VolumeSnapshotClassList`...) with its items. */
export function listItems(value: Record<string, unknown>): unknown[] | undefined {
  return typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)
    ? (value.items as unknown[])
    : undefined;
}

/** Reads every manifest under the paths with `parse`. Unreadable files are problems, not exceptions. */
export function readManifestFiles(paths: readonly string[], parse: ManifestParser): ManifestSet {
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
      const found = parse(file, text);
      all.objects.push(...found.objects);
      all.problems.push(...found.problems);
    }
  }
  return all;
}
