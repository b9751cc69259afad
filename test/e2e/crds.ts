import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiextensionsV1Api, loadAllYaml, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { waitFor } from './processes.js';

/**
 * Creates every CRD in the YAML files of `dir` and waits until all are established. loadAllYaml maps YAML keys
 * (x-kubernetes-preserve-unknown-fields) to client-node's typed fields; the 1.20 apiserver drops the CEL rules
 * (`x-kubernetes-validations`) it does not know, so every rule is the webhook's to enforce.
 */
export async function installCrds(kc: KubeConfig, dir: string): Promise<void> {
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  let count = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const crd of loadAllYaml(readFileSync(join(dir, file), 'utf8')) as V1CustomResourceDefinition[]) {
      await extensions.createCustomResourceDefinition({ body: crd });
      count += 1;
    }
  }
  await waitFor(
    `${count} CRDs established`,
    async () =>
      (await extensions.listCustomResourceDefinition()).items.filter((c) =>
        c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'),
      ).length === count,
    30_000,
  );
}
