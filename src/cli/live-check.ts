import { CLASS_KIND_FACTS } from '../classes/class-kinds.js';
import type { CheckClass, CheckCluster, WriteAnswer } from '../cluster/live-check-api.js';
import { probeCause, type Cause } from './check-causes.js';

/** One try of `snapshot-webhook check`: live, or each cause found. */
export interface CheckResult {
  readonly live: boolean;
  readonly causes: readonly Cause[];
  /** The denial that proved it live. */
  readonly denial?: string;
  /** The driver the second default was made for. */
  readonly driver?: string;
}

const { group, defaultAnnotation } = CLASS_KIND_FACTS.VolumeSnapshotClass;
/**
 * The driver of the class a check makes when the cluster has no default class: no CSI driver is called so
 * (`.invalid`, RFC 2606), and one per run, so that a run does not meet the claim an earlier run left for 15 s.
 */
export const checkDriver = (run: string): string => `${run}.check.snapshot-webhook.invalid`;
const SNAPSHOT_CRD = 'volumesnapshots.snapshot.storage.k8s.io';

const defaultClass = (name: string, driver: string): CheckClass & Record<string, unknown> => ({
  apiVersion: `${group}/v1`,
  kind: 'VolumeSnapshotClass',
  metadata: {
    name,
    annotations: { [defaultAnnotation]: 'true' },
    labels: { 'app.kubernetes.io/created-by': 'snapshot-webhook-check' },
  },
  driver,
  deletionPolicy: 'Delete',
});

interface Probe {
  readonly answer: WriteAnswer;
  readonly driver: string;
  readonly cleanup?: Cause;
}

/**
 * A second default, as a dry run: for the driver of a default that exists, or, on a cluster with none, for a
 * driver of its own after a first default made for it (deleted before the probe returns). `run` names both.
 */
async function probe(cluster: CheckCluster, run: string): Promise<Probe> {
  const name = `snapshot-webhook-check-${run}`;
  const existing = (await cluster.listClasses()).find(
    (c) => c.metadata.annotations?.[defaultAnnotation] === 'true' && typeof c.driver === 'string' && c.driver !== '',
  );
  if (existing?.driver !== undefined)
    return { answer: await cluster.createClass(defaultClass(name, existing.driver), true), driver: existing.driver };
  const driver = checkDriver(run);
  const first = defaultClass(`${name}-first`, driver);
  const made = await cluster.createClass(first, false);
  if (!made.admitted) return { answer: made, driver };
  let answer: WriteAnswer | undefined;
  let cleanup: Cause | undefined;
  try {
    answer = await cluster.createClass(defaultClass(name, driver), true);
  } finally {
    // Reported, never hidden: the class is a default for a driver no snapshot uses, and must not stay.
    cleanup = await cluster.deleteClass(first.metadata.name).then(
      () => undefined,
      (error: unknown) => ({
        cause: 'cleanup' as const,
        message: `the class ${first.metadata.name} that check made could not be deleted (delete it): ${(error as Error).message}`,
      }),
    );
  }
  return { answer, driver, ...(cleanup === undefined ? {} : { cleanup }) };
}

/**
 * One try: the CRDs, then what the registrations expect of them, then the probe. Every cause found is listed; the
 * rule is live only when the probe was denied with the rule's message and nothing else is wrong. `run` names the
 * classes the probe makes and its driver: one per run of the command, the same for each of its tries.
 */
export async function checkOnce(cluster: CheckCluster, run: string): Promise<CheckResult> {
  if (!(await cluster.classesServed()))
    return {
      live: false,
      causes: [
        {
          cause: 'crds',
          message:
            'snapshot.storage.k8s.io/v1 volumesnapshotclasses is not served: install the snapshot CRDs of ' +
            'kubernetes-csi/external-snapshotter before the webhook (docs/compatibility.md)',
        },
      ],
    };
  const causes: Cause[] = [];
  const registrations = await cluster.registrations();
  if (registrations.withMatchConditions.length > 0 && (await cluster.crdHasCel(SNAPSHOT_CRD)) === false)
    causes.push({
      cause: 'cel',
      message:
        `${registrations.withMatchConditions.join(', ')} leave each VolumeSnapshot's checks to the CRDs' CEL rules ` +
        `(matchConditions), but ${SNAPSHOT_CRD} has none (CRDs before external-snapshotter v8.0): add the component ` +
        'without-match-conditions, or install current CRDs',
    });
  const conversion = await cluster.conversionFailure();
  if (conversion !== undefined)
    causes.push({ cause: 'conversion', message: `conversion is wired on the group snapshot CRDs but fails: ${conversion}` });
  const { answer, driver, cleanup } = await probe(cluster, run);
  if (cleanup !== undefined) causes.push(cleanup);
  const cause = probeCause(answer, registrations.registered);
  if (cause !== undefined) causes.unshift(cause);
  const denial = cause === undefined && !answer.admitted ? answer.message : undefined;
  return { live: causes.length === 0, causes, driver, ...(denial === undefined ? {} : { denial }) };
}
