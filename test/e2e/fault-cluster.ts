// The cluster of a fault suite (apiserver-stopped.e2e.ts, faults.e2e.ts): etcd and an apiserver with the untyped
// CRDs served from the watch cache before the first test, and at the end every webhook the suite started stopped,
// then the cluster, then every other process, by pid.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, untilServedFromCache } from './crds.js';
import { stopAll } from './processes.js';
import type { TestWebhook } from './webhook.js';

export interface FaultCluster {
  readonly dir: string;
  /** The cluster, once the suite's `t.before` has run. */
  readonly cluster: TestCluster;
  /** Webhooks to stop at the end. */
  readonly started: TestWebhook[];
}

/** A client of the apiserver a kubeconfig file names. */
export function client(kubeconfig: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return kc;
}

/** Registers the suite's `t.before` (the cluster, then `setup`) and `t.teardown`. */
export function faultCluster(name: string, setup: (kc: KubeConfig) => Promise<void> = async () => {}): FaultCluster {
  const dir = mkdtempSync(join(tmpdir(), `sw-${name}-`));
  let cluster: TestCluster | undefined;
  const started: TestWebhook[] = [];
  t.teardown(async () => {
    for (const w of started) await w.process.stop();
    await cluster?.stop();
    stopAll();
    rmSync(dir, { recursive: true, force: true });
  });
  t.before(async () => {
    cluster = await startCluster(dir);
    const kc = client(cluster.kubeconfig);
    await installCrds(kc, 'untyped');
    await untilServedFromCache(kc, 'untyped');
    await setup(kc);
  });
  return {
    dir,
    get cluster(): TestCluster {
      if (cluster === undefined) throw new Error('the cluster starts in t.before');
      return cluster;
    },
    started,
  };
}
