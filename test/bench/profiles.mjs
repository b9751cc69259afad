// npm run bench -- --profiles: the runtime settings of one node against the cluster's, in one run, as pods on the
// end-to-end suite's kube-apiserver with 100 classes (cluster-mode.ts): idle RSS, start to ready, the p99 at an
// edge apiserver's rate and the peak RSS after 10 s at saturation. The profiles are the base Deployment's, the
// component single-node's (both rendered by kubectl kustomize, as they ship) and the candidates below; prints a
// Markdown table for docs/microshift.md and the JSON line.
import { spawnSync } from 'node:child_process';
import { renderedEnv } from '../helpers/deployment.mjs';
import { ROOT } from './servers.mjs';

/** An edge apiserver's rate of admission calls: a few class writes and contents a second, with room. */
export const EDGE_RATE = 20;

export function runProfiles(runs, candidates) {
  const cluster = renderedEnv([]);
  const profiles = [
    { name: 'cluster (the base)', env: cluster },
    { name: 'single-node (the component)', env: renderedEnv(['single-node']) },
    ...candidates.map((c) => ({ name: c.name, env: { ...cluster, ...c.env } })),
  ];
  const settings = JSON.stringify({ runs, profiles, rate: EDGE_RATE });
  const run = spawnSync(process.execPath, ['--import=tsx', `${ROOT}test/bench/cluster-mode.ts`, settings], {
    encoding: 'utf8',
    timeout: 60 * 60_000,
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`cluster-mode.ts: ${(run.stderr || run.stdout).slice(-2000)}`);
  const result = JSON.parse(line);
  const round = (x) => (x >= 100 ? Math.round(x) : Math.round(x * 10) / 10);
  const cell = (f) => `${round(f.median)} (${round(f.min)}–${round(f.max)})`;
  const rows = result.variants.map((v, i) => {
    const env = Object.entries(profiles[i].env)
      .map(([k, value]) => `${k}=${value}`)
      .join(' ');
    return `| ${v.variant} | \`${env}\` | ${cell(v.rssMb)} | ${cell(v.peakRssMb)} | ${cell(v.p99AtRateMs)} | ${cell(v.startToReadyMs)} |`;
  });
  return [
    `| profile | environment | idle RSS, MB | peak RSS, MB | p99 at ${EDGE_RATE} req/s, ms | start to ready, ms |`,
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    line,
  ].join('\n');
}
