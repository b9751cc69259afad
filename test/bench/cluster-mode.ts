// Cluster mode for npm run bench: RSS with the informers synced, and start to ready, against the real
// kube-apiserver of the end-to-end suite: ours as it ships and the upstream webhook. Both run as a pod does
// (test/e2e/as-a-pod.ts): the shipped ServiceAccount's token at the kubelet's path and the in-cluster environment,
// no kubeconfig. Prints one JSON line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { podCommand, podIdentity, type PodContainer } from '../e2e/as-a-pod.js';
import { shippedContainer } from '../e2e/shipped-container.js';
import { startCluster } from '../e2e/cluster.js';
import { installCrds, untilServedFromCache } from '../e2e/crds.js';
import { freePort, stopAll, waitFor } from '../e2e/processes.js';
import { ensureDevCerts, devCertPaths } from '../../src/certs/dev-certs.js';
import { httpsGet } from '../e2e/webhook.js';
import { requestMix } from './mix.mjs';
import { peakRssMb, runLoad } from './servers.mjs';

interface LoadResult {
  readonly latency: { readonly p99: number };
}

/**
 * From run.mjs: runs, and the upstream webhook's binary; or, for `npm run bench -- --profiles`, the runtime
 * settings to compare (ours only, each with that environment over the Deployment's) and the rate of the load that
 * follows the idle reading: the matched mix at `rate` requests/s, then 10 s at saturation, for the p99 at that
 * rate and the peak RSS.
 */
const settings = JSON.parse(process.argv[2] ?? '{}') as {
  runs?: number;
  upstream?: string;
  profiles?: { name: string; env: Record<string, string> }[];
  rate?: number;
};
const runs = settings.runs ?? 3;

interface Variant {
  readonly name: string;
  readonly container: (port: number, certDir: string) => PodContainer;
}

/** Where upstream's example Deployment mounts its serving certificates (deploy/kubernetes/webhook-example). */
const UPSTREAM_CERTS = '/etc/snapshot-validation-webhook/certs';

/**
 * Ours as it ships (shipped-container.ts: the image's files, the Deployment's arguments and runtime settings; it
 * binds loopback only), and the upstream webhook as the peer: its binary alone in the image, its certificates where
 * its example Deployment mounts them (its in-cluster config reads the same token). Both under the Deployment's
 * security settings.
 */
const withEnv = (container: PodContainer, env: Record<string, string>): PodContainer => ({
  ...container,
  env: { ...container.env, ...env },
});
const VARIANTS: Variant[] = settings.profiles?.map((p) => ({
  name: p.name,
  container: (port: number, certDir: string) => withEnv(shippedContainer(certDir, port), p.env),
})) ?? [
  { name: 'ours', container: (port, certDir) => shippedContainer(certDir, port) },
  ...(settings.upstream === undefined
    ? []
    : [
        {
          name: 'upstream',
          container: (port: number, certDir: string): PodContainer => ({
            files: { '/snapshot-validation-webhook': settings.upstream as string },
            workingDir: '/',
            user: { user: 65532, group: 65532 },
            command: [
              '/snapshot-validation-webhook',
              `--port=${port}`,
              `--tls-cert-file=${UPSTREAM_CERTS}/tls.crt`,
              `--tls-private-key-file=${UPSTREAM_CERTS}/tls.key`,
            ],
            env: {},
            secrets: { [UPSTREAM_CERTS]: certDir },
          }),
        },
      ]),
];

/**
 * Idle RSS is the highest of one reading a second over this long after ready: it spans six rounds of the
 * permission reviews and watch probes and one end of the watches (60 s), the idle work whose memory a reading 2 s
 * after ready missed (docs/benchmarks.md).
 */
const IDLE_S = 60;
const rssMb = (pid: number): number =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 102.4) / 10;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;

const dir = mkdtempSync(join(tmpdir(), 'sw-bench-cluster-'));
const cluster = await startCluster(dir);
try {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'untyped');
  await untilServedFromCache(kc, 'untyped');
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (let i = 0; i < 100; i++) {
    const annotations = i < 10 ? { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } : {};
    await custom.createClusterCustomObject({
      group: 'snapshot.storage.k8s.io',
      version: 'v1',
      plural: 'volumesnapshotclasses',
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: { name: `class-${i}`, annotations },
        driver: `d${i % 10}.csi.example.com`,
        deletionPolicy: 'Delete',
      },
    });
  }
  const identity = await podIdentity(cluster, dir);
  const bodiesFile = join(dir, 'matched-bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(requestMix('matched')));
  const certDir = join(dir, 'certs');
  await ensureDevCerts(certDir);
  const ca = readFileSync(devCertPaths(certDir).caFile);
  const results = [];
  for (const variant of VARIANTS) {
    const rss: number[] = [];
    const ready: number[] = [];
    const p99: number[] = [];
    const peak: number[] = [];
    for (let run = 0; run < runs; run++) {
      const port = await freePort();
      const started = performance.now();
      const container = variant.container(port, certDir);
      const start = podCommand(identity, container, dir);
      const child = spawn(start.command, start.args, { stdio: 'ignore' });
      await waitFor('ready', async () => (await httpsGet(port, '/readyz', ca)).status === 200, 30_000, 5);
      ready.push(performance.now() - started);
      let highest = 0;
      for (let second = 0; second < IDLE_S; second++) {
        await new Promise((r) => setTimeout(r, 1000));
        highest = Math.max(highest, rssMb(child.pid as number));
      }
      rss.push(highest);
      if (settings.rate !== undefined) {
        const load = { url: `https://localhost:${port}/validate`, ca: devCertPaths(certDir).caFile, bodies: bodiesFile };
        const edge = (await runLoad({ ...load, connections: 4, duration: 30, rate: settings.rate })) as LoadResult;
        await runLoad({ ...load, connections: 100, warmup: 2, duration: 10 });
        p99.push(edge.latency.p99);
        peak.push(peakRssMb(child.pid as number));
      }
      process.kill(child.pid as number, 'SIGTERM');
      await new Promise((r) => child.once('exit', r));
      start.cgroup.remove();
    }
    results.push({
      variant: variant.name,
      rssMb: { median: median(rss), min: Math.min(...rss), max: Math.max(...rss) },
      startToReadyMs: { median: median(ready), min: Math.min(...ready), max: Math.max(...ready) },
      ...(settings.rate === undefined
        ? {}
        : {
            p99AtRateMs: { median: median(p99), min: Math.min(...p99), max: Math.max(...p99) },
            peakRssMb: { median: median(peak), min: Math.min(...peak), max: Math.max(...peak) },
          }),
    });
  }
  console.log(JSON.stringify({ classes: 100, idleSeconds: IDLE_S, rate: settings.rate, variants: results }));
} finally {
  await cluster.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
}
