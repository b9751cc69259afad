import type { KubeConfig } from '@kubernetes/client-node';
import { ApiserverError } from './apiserver-error.js';
import { kubeExchange } from './kube-http.js';

/** The parts of a coordination.k8s.io/v1 Lease the default claims use. */
export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: { holderIdentity?: string; renewTime?: string; [key: string]: unknown };
}

/** Leases in one namespace: read, create, and replace at a resourceVersion (409 when it moved). */
export interface LeaseStore {
  readonly namespace: string;
  /** The Lease (undefined when absent) and the apiserver's clock at the answer. */
  read(name: string, timeoutMs: number): Promise<{ lease: Lease | undefined; now: number }>;
  /** Creates the Lease, or replaces it when `lease.metadata.resourceVersion` is set. */
  write(lease: Lease, timeoutMs: number): Promise<void>;
}

/** The real store: GET, POST and PUT on `/apis/coordination.k8s.io/v1/namespaces/NS/leases`. */
export function leaseStore(kc: KubeConfig, namespace: string): LeaseStore {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return {
    namespace,
    async read(name, timeoutMs) {
      try {
        const answer = await kubeExchange<Lease>(kc, 'GET', `${collection}/${encodeURIComponent(name)}`, undefined, timeoutMs);
        return { lease: answer.body, now: answer.date };
      } catch (error) {
        // Absent: the 404 carries the apiserver's clock too.
        if (error instanceof ApiserverError && error.status === 404 && error.date !== undefined)
          return { lease: undefined, now: error.date };
        throw error;
      }
    },
    async write(lease, timeoutMs) {
      const existing = lease.metadata.resourceVersion !== undefined;
      const path = existing ? `${collection}/${encodeURIComponent(lease.metadata.name)}` : collection;
      await kubeExchange(kc, existing ? 'PUT' : 'POST', path, lease, timeoutMs);
    },
  };
}
