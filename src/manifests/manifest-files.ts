import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { join, matchesGlob, normalize } from 'node:path';

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
  /** A YAML error in a text that holds `{{`: the file may be a template (the CLI says so). */
  readonly templateMarks?: boolean;
}

export interface ManifestSet {
  readonly objects: ManifestObject[];
  readonly problems: ManifestProblem[];
}

/** Parses one file's text into objects and problems. */
export type ManifestParser = (file: string, text: string) => ManifestSet;

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** The largest manifest file read (64 MiB): far past any real manifest, well inside the CLI's memory. */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

/** A file's text, or why it is not read: too large, or unreadable. */
export function readBounded(file: string | 0): { text: string } | { problem: string } {
  try {
    if (file !== 0 && statSync(file).size > MAX_MANIFEST_BYTES)
      return { problem: `too large: over ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB` };
    const chunks: Buffer[] = [];
    let total = 0;
    const buffer = Buffer.alloc(1024 * 1024);
    const fd = file === 0 ? 0 : openSync(file, 'r');
    try {
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) {
        total += n;
        if (total > MAX_MANIFEST_BYTES) return { problem: `too large: over ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB` };
        chunks.push(Buffer.from(buffer.subarray(0, n)));
      }
    } finally {
      if (fd !== 0) closeSync(fd);
    }
    return { text: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    return { problem: `cannot read: ${(error as Error).message}` };
  }
}

/** Whether a path (as the walk finds it, normalized: `chart/templates/a.yaml`) matches one of the globs. */
function excluded(path: string, exclude: readonly string[]): boolean {
  const normalized = normalize(path);
  return exclude.some((glob) => matchesGlob(normalized, glob));
}

/**
 * Files under a path: the path itself if it is a file, else every .yaml/.yml/.json below it, sorted. A file or
 * folder whose path matches an `exclude` glob is left out (a folder with everything below it).
 */
export function manifestFiles(path: string, exclude: readonly string[] = []): string[] {
  if (excluded(path, exclude)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const full = join(path, e.name);
      if (e.isDirectory()) return manifestFiles(full, exclude);
      return MANIFEST_FILE.test(e.name) && !excluded(full, exclude) ? [full] : [];
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
export function readManifestFiles(paths: readonly string[], parse: ManifestParser, exclude: readonly string[] = []): ManifestSet {
  const all: ManifestSet = { objects: [], problems: [] };
  for (const path of paths) {
    let files: string[];
    try {
      files = manifestFiles(path, exclude);
    } catch (error) {
      all.problems.push({ file: path, line: 0, message: `cannot read: ${(error as Error).message}` });
      continue;
    }
    for (const file of files) {
      const read = readBounded(file);
      if ('problem' in read) {
        all.problems.push({ file, line: 0, message: read.problem });
        continue;
      }
      const found = parse(file, read.text);
      all.objects.push(...found.objects);
      all.problems.push(...found.problems);
    }
  }
  return all;
}
