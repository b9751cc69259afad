// OpenShift's restricted-v2 SecurityContextConstraints, as its admission assigns a pod's identity when the pod
// leaves it open (manifests/overlays/openshift drops runAsUser and runAsGroup for this): runAsUser is the first
// uid of the namespace's range (MustRunAsRange), fsGroup the first gid of its supplemental groups (MustRunAs; the
// uid range when the namespace has none), and runAsGroup stays unset. A runAsUser or fsGroup the pod sets itself
// must lie in those ranges, or admission rejects the pod. OpenShift's namespace controller writes the ranges on
// every namespace as `start/size` blocks, a comma between blocks.
import type { UserContext } from './pod-user.js';

export const UID_RANGE = 'openshift.io/sa.scc.uid-range';
export const SUPPLEMENTAL_GROUPS = 'openshift.io/sa.scc.supplemental-groups';

function ranges(blocks: string, annotation: string): [number, number][] {
  return blocks.split(',').map((block) => {
    const match = /^(\d+)\/(\d+)$/.exec(block.trim());
    if (match === null) throw new Error(`${annotation}: "${block}" is not start/size`);
    return [Number(match[1]), Number(match[1]) + Number(match[2]) - 1];
  });
}

/** The pod's own value if it lies in the ranges (else admission's rejection), or the first of the ranges. */
function assign(own: number | undefined, blocks: string, annotation: string, field: string): number {
  const all = ranges(blocks, annotation);
  if (own === undefined) return all[0]?.[0] as number;
  if (all.some(([low, high]) => own >= low && own <= high)) return own;
  throw new Error(`restricted-v2 rejects the pod: ${field} ${own} is not in ${annotation} ${blocks}`);
}

/** What restricted-v2 sets in a pod of a namespace with these annotations, over the pod's own context. */
export function restrictedV2<T extends UserContext>(annotations: Readonly<Record<string, string>>, pod: T): T {
  const uids = annotations[UID_RANGE];
  if (uids === undefined) throw new Error(`the namespace has no ${UID_RANGE}`);
  return {
    ...pod,
    runAsUser: assign(pod.runAsUser, uids, UID_RANGE, 'runAsUser'),
    fsGroup: assign(pod.fsGroup, annotations[SUPPLEMENTAL_GROUPS] ?? uids, SUPPLEMENTAL_GROUPS, 'fsGroup'),
  };
}
