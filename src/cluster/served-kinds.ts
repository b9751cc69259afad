import { GROUP_SNAPSHOT_API, SNAPSHOT_API } from '../classes/class-kinds.js';
import { statusOf } from './apiserver-error.js';
import { loadKubeConfig } from './client-node-api.js';
import { kubeRequest } from './kube-http.js';

/** The snapshot API groups, whose kinds `validate --kubeconfig` checks against what the cluster serves. */
const GROUPS = [SNAPSHOT_API.group, GROUP_SNAPSHOT_API.group];

/** For each snapshot API group: each kind it serves, with the versions that serve it. */
export type ServedKinds = ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;

/**
 * What the cluster serves of the snapshot API groups, read from discovery (`/apis/GROUP`, then each version's
 * resource list): a kind is served at a version only when a CRD serves it there (`served: true`).
 */
export async function servedSnapshotKinds(kubeconfig: string | undefined): Promise<ServedKinds> {
  const kc = loadKubeConfig(kubeconfig);
  const served = new Map<string, Map<string, string[]>>();
  for (const group of GROUPS) {
    const kinds = new Map<string, string[]>();
    served.set(group, kinds);
    let versions: { version: string }[];
    try {
      versions = (await kubeRequest<{ versions: { version: string }[] }>(kc, 'GET', `/apis/${group}`)).versions;
    } catch (error) {
      if (statusOf(error) === 404) continue;
      throw error;
    }
    for (const { version } of versions) {
      const list = await kubeRequest<{ resources: { name: string; kind: string }[] }>(kc, 'GET', `/apis/${group}/${version}`);
      for (const { name, kind } of list.resources) {
        if (name.includes('/')) continue; // a subresource such as status
        kinds.set(kind, [...(kinds.get(kind) ?? []), version]);
      }
    }
  }
  return served;
}

/**
 * Why the cluster would refuse an object of the snapshot API groups (its kind not served at its version, as
 * kubectl says "no matches for kind"), naming the versions that do serve it; undefined when it is served, or of
 * another group.
 */
export function notServed(served: ServedKinds, apiVersion: string, kind: string): string | undefined {
  const [group, version] = apiVersion.split('/');
  const kinds = group === undefined ? undefined : served.get(group);
  if (kinds === undefined || version === undefined) return undefined;
  const versions = kinds.get(kind) ?? [];
  if (versions.includes(version)) return undefined;
  const instead =
    versions.length === 0
      ? `it serves no version of ${kind}`
      : `it serves ${kind} at ${versions.map((v) => `${group}/${v}`).join(', ')}; write it at ${group}/${versions[0] ?? ''}`;
  return `the cluster does not serve ${kind} at ${apiVersion}, so kubectl would refuse it (no matches for kind "${kind}" in version "${apiVersion}"): ${instead}`;
}
