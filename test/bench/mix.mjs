// The request mixes: AdmissionReviews exactly as a real kube-apiserver sent them
// (test/fixtures/bench/captured-reviews-*.json, written by `npm run bench:capture`: full size, with metadata,
// managedFields and kubectl's last-applied copy), weighted as a cluster sends them. The writers are an admin with
// `kubectl apply`, and ServiceAccounts as in a cluster: the snapshot-controller, a GitOps controller applying
// server-side and a backup tool. Two mixes, one per webhook configuration:
// - `every-write`, the main one: every snapshot write reaches the webhook, as with upstream's configuration, and with
//   ours before Kubernetes 1.30 (the component without-match-conditions). Captured from kube-apiserver 1.20.2 and
//   snapshot-controller v8.4.0. VolumeSnapshot creates most (10 of them by the two tools), then the controller's
//   content creates and binding updates, class writes (with default-class checks), and a few denials. Two denials
//   are a captured review with one field changed, the write a user or a faulty client would make; on 1.36 the CRDs'
//   own rules reject both before any webhook is called.
// - `matched`: what the shipped configuration's matchConditions pass on from 1.30 on, contents and the class writes that make a default;
//   the same entries and weights, less those the conditions or the CRDs' rules stop first. Captured from
//   kube-apiserver 1.36.2 and snapshot-controller v8.6.0 with the configuration as 1.36 installs it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './servers.mjs';

/** Who writes (test/e2e/capture-reviews.ts): an admin with kubectl, and three ServiceAccounts. */
const ADMIN = 'e2e-admin';
const CONTROLLER = 'system:serviceaccount:kube-system:snapshot-controller';
const GITOPS = 'system:serviceaccount:flux-system:kustomize-controller';
const BACKUP = 'system:serviceaccount:velero:velero';

/** Each mix's capture, and whether it holds only the entries that reach the webhook on 1.30+ (`matched` below). */
export const MIXES = {
  'every-write': { capture: `${ROOT}test/fixtures/bench/captured-reviews-1.20.json`, onlyMatched: false },
  matched: { capture: `${ROOT}test/fixtures/bench/captured-reviews-1.36.json`, onlyMatched: true },
};

/** Whether a captured review is this user's, operation, kind and (a prefix of) name. */
const isReview =
  (user, operation, kind, name) =>
  ({ request: r }) =>
    r.userInfo.username === user && r.operation === operation && r.kind.kind === kind && r.name.startsWith(name);

/** The first such captured review, copied. */
function captured(reviews, user, operation, kind, name) {
  const found = reviews.find(isReview(user, operation, kind, name));
  if (found === undefined) throw new Error(`the capture has no ${user} ${operation} of ${kind} ${name}`);
  return structuredClone(found);
}

/**
 * The entries: what each is (`name`), its weight out of 100, whether ours allows it against the bench's classes
 * (test/unit/bench-mix.test.ts checks each), whether it reaches the webhook on 1.30+ (`matched`: in the matched mix;
 * the test checks that against the 1.36 capture), which captured review it is (`of`: who wrote it, the operation, the
 * kind, the name or its prefix) and, for a denial made from an allowed write, the one field its object changes.
 */
const ENTRIES = [
  {
    name: 'snapshot create, class named',
    weight: 20,
    allowed: true,
    matched: false,
    of: [ADMIN, 'CREATE', 'VolumeSnapshot', 'data-nightly'],
  },
  {
    name: 'snapshot create, applied server-side by a GitOps controller',
    weight: 5,
    allowed: true,
    matched: false,
    of: [GITOPS, 'CREATE', 'VolumeSnapshot', 'data-weekly'],
  },
  {
    name: 'snapshot create by a backup tool',
    weight: 5,
    allowed: true,
    matched: false,
    of: [BACKUP, 'CREATE', 'VolumeSnapshot', 'velero-data-'],
  },
  {
    name: 'snapshot create, default class',
    weight: 15,
    allowed: true,
    matched: false,
    of: [ADMIN, 'CREATE', 'VolumeSnapshot', 'data-hourly'],
  },
  {
    name: 'snapshot create, pre-provisioned content',
    weight: 5,
    allowed: true,
    matched: false,
    of: [ADMIN, 'CREATE', 'VolumeSnapshot', 'restored'],
  },
  {
    name: 'content create by the controller',
    weight: 12,
    allowed: true,
    matched: true,
    of: [CONTROLLER, 'CREATE', 'VolumeSnapshotContent', 'snapcontent-'],
  },
  {
    name: 'content create, pre-provisioned',
    weight: 3,
    allowed: true,
    matched: true,
    of: [ADMIN, 'CREATE', 'VolumeSnapshotContent', 'restored-content'],
  },
  {
    name: 'content update, the controller binds it',
    weight: 8,
    allowed: true,
    matched: true,
    of: [CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'restored-content'],
  },
  {
    name: 'snapshot update, the controller sets the default class',
    weight: 4,
    allowed: true,
    matched: false,
    of: [CONTROLLER, 'UPDATE', 'VolumeSnapshot', 'data-hourly'],
  },
  {
    name: 'content update by the controller',
    weight: 3,
    allowed: true,
    matched: true,
    of: [CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'snapcontent-'],
  },
  {
    name: 'class create, not a default',
    weight: 4,
    allowed: true,
    matched: false,
    of: [ADMIN, 'CREATE', 'VolumeSnapshotClass', 'csi-hostpath-archive'],
  },
  {
    name: 'class update, the default stays',
    weight: 3,
    allowed: true,
    // Not sent from 1.30 on: the rule allows an UPDATE that keeps a class its driver's default.
    matched: false,
    of: [ADMIN, 'UPDATE', 'VolumeSnapshotClass', 'csi-hostpath-snapclass'],
  },
  {
    name: 'class create, a second default (denied)',
    weight: 3,
    allowed: false,
    matched: true,
    of: [ADMIN, 'CREATE', 'VolumeSnapshotClass', 'second'],
  },
  {
    name: 'snapshot create with both sources (denied)',
    weight: 5,
    allowed: false,
    matched: false,
    of: [ADMIN, 'CREATE', 'VolumeSnapshot', 'data-nightly'],
    change: (o) => (o.spec.source.volumeSnapshotContentName = 'restored-content'),
  },
  {
    name: "content update changing the source's volume handle (denied)",
    weight: 5,
    allowed: false,
    matched: false,
    of: [CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'snapcontent-'],
    change: (o) => (o.spec.source.volumeHandle = 'vol-other'),
  },
];

/** A mix's entries (`every-write` or `matched`), from its committed capture or from `file`, a new one. */
export function mixEntries(mix = 'every-write', file = MIXES[mix].capture) {
  const { reviews } = JSON.parse(readFileSync(file, 'utf8'));
  return ENTRIES.filter((e) => e.matched || !MIXES[mix].onlyMatched).map(({ name, weight, allowed, of, change }) => {
    const review = captured(reviews, ...of);
    change?.(review.request.object);
    return { name, weight, allowed, review };
  });
}

/** The entries of `every-write` that the `matched` mix leaves out: whether each was changed, and its review's test. */
export function entriesLeftOut() {
  return ENTRIES.filter((e) => !e.matched).map(({ name, of, change }) => ({
    name,
    changed: change !== undefined,
    isReview: isReview(...of),
  }));
}

/** A mix's request bodies, each entry as often as its weight, in a spread-out order (not all of one kind in a row). */
export function requestMix(mix = 'every-write') {
  const bodies = [];
  for (const { weight, review } of mixEntries(mix)) for (let i = 0; i < weight; i++) bodies.push(JSON.stringify(review));
  // A fixed shuffle (seeded), so every run sends the same sequence.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = bodies.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [bodies[i], bodies[j]] = [bodies[j], bodies[i]];
  }
  return bodies;
}

/** The fixtures' classes: what `npm start` serves. */
export const FIXTURE_CLASSES = `${ROOT}test/fixtures/classes/classes.yaml`;

/** How many classes a manifest text holds. */
export const countClasses = (text) => text.split(/^kind: /m).length - 1;

/** A realistic class set: the fixtures' classes plus 200 more over 40 drivers, one default each. */
export function classManifests() {
  const docs = [readFileSync(FIXTURE_CLASSES, 'utf8')];
  for (let i = 0; i < 200; i++) {
    const driver = `driver-${i % 40}.csi.example.com`;
    const isDefault = i < 40 ? '\n  annotations:\n    snapshot.storage.kubernetes.io/is-default-class: "true"' : '';
    docs.push(
      `apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata:\n  name: class-${i}${isDefault}\ndriver: ${driver}\ndeletionPolicy: Delete\n`,
    );
  }
  return docs.join('\n---\n');
}

/** A work folder with a development CA and serving certificate, and the bench's class set written out. */
export function prepareWork(prefix) {
  const work = mkdtempSync(join(tmpdir(), prefix));
  execFileSync(process.execPath, [`${ROOT}dist/certs/ensure-dev-certs.js`, join(work, 'certs')], { stdio: 'ignore' });
  const certs = { cert: join(work, 'certs/tls.crt'), key: join(work, 'certs/tls.key'), ca: join(work, 'certs/ca.crt') };
  const classes = join(work, 'classes.yaml');
  const classText = classManifests();
  writeFileSync(classes, classText);
  return { work, certs, classes, classText };
}
