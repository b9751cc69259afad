// The webhook's container as its pod runs it, read from the Containerfile and the Deployment (never copied): the
// image's last stage (its WORKDIR, the files it copies from the build stage, its ENV, USER and ENTRYPOINT), the
// Deployment's arguments in place of the image's CMD, and its secret volume of serving certificates.
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deploymentArgs, deploymentEnv, deploymentSecretMounts } from '../helpers/deployment.mjs';
import type { PodContainer } from './as-a-pod.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Stage {
  readonly name: string | undefined;
  /** Each instruction and the rest of its line. */
  readonly lines: readonly (readonly [string, string])[];
}

function stages(): Stage[] {
  const result: { name: string | undefined; lines: [string, string][] }[] = [];
  for (const line of readFileSync(join(ROOT, 'Containerfile'), 'utf8').split('\n')) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const [, instruction, rest] = match as unknown as [string, string, string];
    if (instruction === 'FROM') result.push({ name: /\sAS\s+(\S+)$/i.exec(rest)?.[1], lines: [] });
    else result.at(-1)?.lines.push([instruction, rest]);
  }
  return result;
}

const last = (stage: Stage, instruction: string): string | undefined =>
  stage.lines.filter(([i]) => i === instruction).at(-1)?.[1];

/**
 * What the image's COPY --from lines put in it: the path in the image, and the same file in this checkout. What
 * the build stage makes under /out (the Node of the target's platform, the SBOM) is not in a checkout: the pinned
 * Node is bound at the ENTRYPOINT's path below, and the SBOM is not read when serving.
 */
function copiedFiles(all: readonly Stage[], image: Stage, workingDir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [, rest] of image.lines.filter(([i]) => i === 'COPY')) {
    const [, from, source, target] = /^--from=(\S+)\s+(\S+)\s+(\S+)$/.exec(rest) ?? [];
    const build = all.find((s) => s.name === from);
    if (build === undefined || source === undefined || target === undefined) throw new Error(`Containerfile: COPY ${rest}`);
    if (source.startsWith('/out/')) continue;
    const relative = posix.relative(last(build, 'WORKDIR') ?? '/', source);
    const into = target.endsWith('/') && !source.endsWith('/') ? posix.basename(source) : '';
    files[posix.resolve(workingDir, target, into)] = join(ROOT, relative);
  }
  return files;
}

/**
 * Ours: the image's files bound from this checkout (a build stage's `/src/dist/bundle` is this checkout's
 * `dist/bundle`, which `npm run build` made as the build stage does), the pinned Node at the base image's path
 * (the ENTRYPOINT's first word), the Deployment's arguments with `port` put in and loopback only, and the serving
 * certificates of `certDir` as the Deployment's secret volume.
 */
export function shippedContainer(certDir: string, port: number): PodContainer {
  const all = stages();
  const image = all.at(-1) as Stage;
  const workingDir = last(image, 'WORKDIR') ?? '/';
  const files = copiedFiles(all, image, workingDir);
  const entrypoint = JSON.parse(last(image, 'ENTRYPOINT') ?? '[]') as string[];
  const [node] = entrypoint;
  if (node === undefined) throw new Error('Containerfile: no ENTRYPOINT');
  files[node] = process.execPath;
  const [user, group] = (last(image, 'USER') ?? '0:0').split(':').map(Number);
  const env = Object.fromEntries(
    image.lines.filter(([i]) => i === 'ENV').map(([, rest]) => rest.split('=', 2) as [string, string]),
  );
  return {
    files,
    workingDir,
    user: { user: user ?? 0, group: group ?? user ?? 0 },
    command: [...entrypoint, ...deploymentArgs(undefined, port), '--bind-address=127.0.0.1'],
    env: { ...env, ...deploymentEnv() },
    secrets: Object.fromEntries(deploymentSecretMounts().map((m) => [m.mountPath, certDir])),
  };
}
