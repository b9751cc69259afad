import { existsSync, readFileSync } from 'node:fs';
import type { DefaultAgreement } from '../rules/default-claim.js';
import { ClassIndex } from '../classes/class-index.js';
import { UsageError } from '../config/flags.js';
import type { ClassSource } from '../classes/class-source.js';
import type { Logger } from '../log/logger.js';
import { clientNodeApi, eventSink, loadKubeConfig } from './client-node-api.js';
import { ClassWatchers, DEFAULT_TIMING } from './class-watchers.js';
import { LeaseDefaultAgreement } from './default-agreement.js';
import type { EventSink } from './denial-events.js';
import { doubleDefaultLog } from './double-default-log.js';
import { leaseStore } from './lease-store.js';
import { PermissionCheck, requiredPermissions, selfSubjectAccess } from './permissions.js';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface ClusterSourceOptions {
  readonly kubeconfig: string | undefined;
  /** Where the default-class Leases live; in a pod, the service account's namespace when not given. */
  readonly namespace: string | undefined;
  readonly logger: Logger;
  readonly discoveryIntervalMs: number;
}

export interface ClusterClassSource extends ClassSource {
  readonly watchers: ClassWatchers;
}

/** What the server uses of a live cluster: the classes it watches, where denial events go, and the claims. */
export interface ClusterConnection {
  readonly classes: ClusterClassSource;
  readonly events: EventSink;
  readonly agreement: DefaultAgreement;
  /** The RBAC the webhook needs, asked at start and every 10 s (started and stopped with the classes). */
  readonly permissions: PermissionCheck;
}

function webhookNamespace(given: string | undefined): string {
  if (given !== undefined && given !== '') return given;
  if (existsSync(IN_CLUSTER_NAMESPACE)) return readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim();
  throw new UsageError(
    'serving a cluster needs the namespace for the default-class Leases: pass --namespace NS or set POD_NAMESPACE',
  );
}

/** Classes from a live cluster through client-node informers; events and Leases on the same kubeconfig. */
export function connectCluster(options: ClusterSourceOptions): ClusterConnection {
  const namespace = webhookNamespace(options.namespace);
  const kc = loadKubeConfig(options.kubeconfig);
  const index = new ClassIndex(Date.now, doubleDefaultLog(options.logger));
  const watchers = new ClassWatchers(index, clientNodeApi(kc), options.logger, {
    ...DEFAULT_TIMING,
    rediscoverMs: options.discoveryIntervalMs,
  });
  const permissions = new PermissionCheck(selfSubjectAccess(kc), options.logger, requiredPermissions(namespace));
  const classes: ClusterClassSource = {
    index,
    mode: 'cluster',
    watchers,
    start: async () => {
      permissions.start();
      await watchers.start();
    },
    stop: async () => {
      await permissions.stop();
      watchers.stop();
    },
    notReadyReasons: () => watchers.notReadyReasons(),
    cacheStatus: watchers,
  };
  const agreement = new LeaseDefaultAgreement({
    store: leaseStore(kc, namespace),
    index,
    healthy: (kind) => watchers.isHealthy(kind),
    logger: options.logger,
  });
  return { classes, events: eventSink(kc), agreement, permissions };
}
