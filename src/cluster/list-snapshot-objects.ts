import type { KubeConfig } from '@kubernetes/client-node';
import { statusOf } from './apiserver-error.js';
import { kubeRequest } from './kube-http.js';
import { BOUNDS } from '../limits/bounds.js';

/** What to list: one resource of one served version (from the route table). */
export interface ListTarget {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
}

/** One served version of a group and the resources it serves, as discovery lists them. */
export interface ServedVersion {
  readonly version: string;
  readonly resources: readonly string[];
}

interface ListAnswer {
  readonly items?: Record<string, unknown>[];
  readonly metadata?: { readonly continue?: string };
}

/**
 * The versions the cluster serves of a group, the apiserver's preferred first, each with the resources it serves
 * (CRDs may serve different versions per kind); none when the group is not served (CRDs not installed).
 */
export async function servedVersions(kc: KubeConfig, group: string): Promise<ServedVersion[]> {
  let versions: string[];
  try {
    const answer = await kubeRequest<{ versions?: { version: string }[] }>(kc, 'GET', `/apis/${group}`);
    versions = (answer.versions ?? []).map((v) => v.version);
  } catch (error) {
    if (statusOf(error) === 404) return [];
    throw error;
  }
  const served: ServedVersion[] = [];
  for (const version of versions) {
    const list = await kubeRequest<{ resources?: { name: string }[] }>(kc, 'GET', `/apis/${group}/${version}`);
    // Subresources (`volumesnapshots/status`) are not kinds of their own.
    served.push({ version, resources: (list.resources ?? []).map((r) => r.name).filter((n) => !n.includes('/')) });
  }
  return served;
}

/** Why a list failed, in the words an operator acts on. */
export function listProblem(target: ListTarget, error: unknown): string {
  const what = `${target.resource}.${target.version}.${target.group}`;
  const status = statusOf(error);
  if (status === 403) return `forbidden to list ${what}: grant list on ${target.resource} (group ${target.group})`;
  if (status === 404) return `${what} is not served (its CRD does not serve ${target.version})`;
  return `cannot list ${what}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Every object of a resource, a page at a time (limit and continue), each with the apiVersion and kind of the
 * version it was read at.
 */
export async function* listPages(kc: KubeConfig, target: ListTarget): AsyncGenerator<Record<string, unknown>[]> {
  const apiVersion = `${target.group}/${target.version}`;
  let token: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(BOUNDS.pageSize), ...(token === undefined ? {} : { continue: token }) });
    const page = await kubeRequest<ListAnswer>(kc, 'GET', `/apis/${apiVersion}/${target.resource}?${query.toString()}`);
    yield (page.items ?? []).map((item) => ({ ...item, apiVersion, kind: target.kind }));
    token = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
  } while (token !== undefined);
}
