import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  loadAllYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { controllerCrds, currentCrds, kube, UNTYPED_CRDS } from './kube.js';
import { waitFor } from './processes.js';

const CONVERSION_COMPONENT = fileURLToPath(new URL('../../manifests/components/conversion/kustomization.yaml', import.meta.url));
const STORE_V1_COMPONENT = fileURLToPath(
  new URL('../../manifests/components/conversion-store-v1/kustomization.yaml', import.meta.url),
);
const GROUP_CRDS = ['volumegroupsnapshots', 'volumegroupsnapshotcontents', 'volumegroupsnapshotclasses'].map(
  (plural) => `${plural}.groupsnapshot.storage.k8s.io`,
);

/**
 * Which CRDs a suite wants on 1.20: `untyped` (every field kept, nothing checked: every rule is the webhook's),
 * `controller` (the v8.4 controller's own) or `current` (upstream's v8.6.0, whose CEL rules 1.20 drops). On 1.36
 * every suite gets upstream's v8.6.0 CRDs as shipped, CEL live, as users run them.
 */
export type CrdChoice = 'untyped' | 'controller' | 'current';

export function crdFolder(choice: CrdChoice): string {
  if (kube.shippedCrds !== undefined) return kube.shippedCrds;
  if (choice === 'untyped') return UNTYPED_CRDS;
  return choice === 'controller' ? controllerCrds() : currentCrds();
}

/** The CRDs of one folder as objects (loadAllYaml maps YAML keys to client-node's typed fields). */
export function readCrds(dir: string): V1CustomResourceDefinition[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) => loadAllYaml(readFileSync(join(dir, file), 'utf8')) as V1CustomResourceDefinition[]);
}

/** Creates the CRDs of a suite's choice (see CrdChoice) and waits until all are established. */
export async function installCrds(kc: KubeConfig, choice: CrdChoice): Promise<void> {
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const crds = readCrds(crdFolder(choice));
  for (const crd of crds) await extensions.createCustomResourceDefinition({ body: crd });
  await waitFor(
    `${crds.length} CRDs established`,
    async () =>
      (await extensions.listCustomResourceDefinition()).items.filter((c) =>
        c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'),
      ).length === crds.length,
    30_000,
  );
}

/**
 * Until the apiserver serves the list of each CRD of a suite's choice from its watch cache: 1.36 answers 429
 * "storage is (re)initializing" for a while after a CRD is created, and a webhook that starts then logs a warning
 * and lists again. For a suite about a webhook that starts on a cluster whose CRDs were installed before it.
 */
export async function untilServedFromCache(kc: KubeConfig, choice: CrdChoice): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const crd of readCrds(crdFolder(choice))) {
    const version = crd.spec.versions.find((v) => v.storage)?.name ?? '';
    await waitFor(
      `${crd.spec.names.plural} served from the watch cache`,
      () =>
        custom
          .listClusterCustomObject({ group: crd.spec.group, version, plural: crd.spec.names.plural, resourceVersion: '0' })
          .then(
            () => true,
            () => false,
          ),
      30_000,
      200,
    );
  }
}

/**
 * What the project's install adds to the group snapshot CRDs: the `spec.conversion` of the conversion component
 * (manifests/components/conversion), read from it, with the Service replaced by the loopback webhook's url and
 * its caBundle (what the CA components inject).
 */
export async function wireConversion(kc: KubeConfig, port: number, caBundle: string): Promise<void> {
  const component = parse(readFileSync(CONVERSION_COMPONENT, 'utf8')) as { patches: [{ patch: string }] };
  const [operation] = parse(component.patches[0].patch) as [
    {
      path: string;
      value: { strategy: string; webhook: { conversionReviewVersions: string[]; clientConfig: { service: { path: string } } } };
    },
  ];
  if (operation.path !== '/spec/conversion') throw new Error(`the conversion component patches ${operation.path}`);
  const { strategy, webhook } = operation.value;
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  for (const name of GROUP_CRDS) {
    const crd = await extensions.readCustomResourceDefinition({ name });
    crd.spec.conversion = {
      strategy,
      webhook: {
        conversionReviewVersions: webhook.conversionReviewVersions,
        clientConfig: { url: `https://127.0.0.1:${port}${webhook.clientConfig.service.path}`, caBundle },
      },
    };
    await extensions.replaceCustomResourceDefinition({ name, body: crd });
  }
}

/**
 * The component conversion-store-v1 applied to the live group snapshot CRDs: its JSON patch, read from it, with
 * its `test` operations checked and its `replace` operations made.
 */
export async function storeV1(kc: KubeConfig): Promise<void> {
  const component = parse(readFileSync(STORE_V1_COMPONENT, 'utf8')) as { patches: [{ patch: string }] };
  const operations = parse(component.patches[0].patch) as { op: string; path: string; value: unknown }[];
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  for (const name of GROUP_CRDS) {
    const crd = await extensions.readCustomResourceDefinition({ name });
    const versions = crd.spec.versions as unknown as Record<string, unknown>[];
    for (const { op, path, value } of operations) {
      const [, , , index, field] = path.split('/') as [string, string, string, string, string];
      const version = versions[Number(index)] as Record<string, unknown>;
      if (op === 'test' && version[field] !== value) throw new Error(`${name}: ${path} is ${String(version[field])}`);
      if (op === 'replace') version[field] = value;
    }
    await extensions.replaceCustomResourceDefinition({ name, body: crd });
  }
}
