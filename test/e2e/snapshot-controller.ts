// The real snapshot-controller as the end-to-end suite and the bench's capture run it.
import { join } from 'node:path';
import { RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { unpackTool } from '../helpers/tools.mjs';
import { startProcess, type Started } from './processes.js';
import { CONTROLLER_USER } from './snapshot-objects.js';
import type { TestCluster } from './cluster.js';

/**
 * Starts the snapshot-controller of a tools-folder entry (unpacked into `dir`) as its own user (or with the
 * credentials of `kubeconfig`), with group snapshots on and quick retries, or its own retry intervals (1 s
 * doubling to 5 min) where a test measures how long a user waits.
 */
export function startController(
  tool: string,
  dir: string,
  cluster: TestCluster,
  kubeconfig = cluster.kubeconfigFor(CONTROLLER_USER),
  retries: 'quick' | 'as shipped' = 'quick',
): Started {
  const binary = unpackTool(tool, join(dir, tool));
  return startProcess(binary, [
    `--kubeconfig=${kubeconfig}`,
    '--leader-election=false',
    '--feature-gates=CSIVolumeGroupSnapshot=true',
    ...(retries === 'quick' ? ['--retry-interval-start=500ms', '--retry-interval-max=4s'] : []),
    '--v=4',
  ]);
}

/** The controller's user may do what it needs: cluster-admin (what its review carries is the user, never the role). */
export async function bindControllerUser(kc: KubeConfig): Promise<void> {
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: 'snapshot-controller-test' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: CONTROLLER_USER }],
    },
  });
}
