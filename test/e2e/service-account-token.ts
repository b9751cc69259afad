// A token for a ServiceAccount, as the kubelet asks for one for a pod's projected volume (TokenRequest).
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

/** Asks the apiserver (as `kc`'s user) for an hour's token of `namespace/name`, for the apiserver's own audience. */
export async function serviceAccountToken(kc: KubeConfig, namespace: string, name: string): Promise<string> {
  const issued = await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const token = issued.status?.token;
  if (token === undefined) throw new Error(`no token issued for ${namespace}/${name}`);
  return token;
}
