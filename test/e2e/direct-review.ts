// Reviews sent straight to a webhook (no apiserver in between), for the fault suites.
import type { TestWebhook } from './webhook.js';
import { httpsRequest } from '../helpers/https.js';
import { admissionReview } from '../helpers/review.mjs';

export const SNAPSHOT_CLASSES = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotclasses' };
export const GROUP_CLASSES = { group: 'groupsnapshot.storage.k8s.io', version: 'v1beta2', plural: 'volumegroupsnapshotclasses' };
export const klass = (group: boolean, name: string, driver: string): Record<string, unknown> => ({
  apiVersion: group ? 'groupsnapshot.storage.k8s.io/v1beta2' : 'snapshot.storage.k8s.io/v1',
  kind: group ? 'VolumeGroupSnapshotClass' : 'VolumeSnapshotClass',
  metadata: {
    name,
    annotations: {
      [group ? 'groupsnapshot.storage.kubernetes.io/is-default-class' : 'snapshot.storage.kubernetes.io/is-default-class']:
        'true',
    },
  },
  driver,
  deletionPolicy: 'Delete',
});

/**
 * Asks the webhook directly (no apiserver in between) whether a default class may be created: as a dry run unless
 * `dryRun` is false, when an allowed default is recorded in the kind's claim Lease as an apiserver's write would be.
 */
export async function ask(
  hook: TestWebhook,
  group: boolean,
  name: string,
  driver: string,
  dryRun = true,
): Promise<{ allowed: boolean; message: string }> {
  const target = group
    ? { group: GROUP_CLASSES.group, version: 'v1beta2', kind: 'VolumeGroupSnapshotClass', resource: GROUP_CLASSES.plural }
    : { group: SNAPSHOT_CLASSES.group, version: 'v1', kind: 'VolumeSnapshotClass', resource: SNAPSHOT_CLASSES.plural };
  const review = admissionReview(target, { uid: `${name}-${Date.now()}`, dryRun, object: klass(group, name, driver) });
  const answer = await httpsRequest(hook.port, {
    path: '/validate',
    body: JSON.stringify(review),
    ca: Buffer.from(hook.caBundle, 'base64'),
  });
  const response = (JSON.parse(answer.body) as { response: { allowed: boolean; status?: { message: string } } }).response;
  return { allowed: response.allowed, message: response.status?.message ?? '' };
}
