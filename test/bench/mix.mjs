// The request mix: AdmissionReviews exactly as a real kube-apiserver sent them (test/fixtures/bench/captured-reviews.json,
// written by `npm run bench:capture` from kube-apiserver 1.20.2 and snapshot-controller v8.4.0: full size, with
// metadata, managedFields and kubectl's last-applied copy), weighted as a cluster sends them when every write reaches
// the webhook, as with upstream's configuration: VolumeSnapshot creates most, then the controller's content creates
// and binding updates, class writes (with default-class checks), and a few denials. Two denials are a captured review
// with one field changed, the write a user or a faulty client would make; on 1.36 the CRDs' own rules reject both
// before any webhook is called.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './servers.mjs';

const CAPTURED = `${ROOT}test/fixtures/bench/captured-reviews.json`;
const CONTROLLER = 'snapshot-controller';

/** The first captured review of this user, operation, kind and (a prefix of) name. */
function captured(reviews, user, operation, kind, name) {
  const found = reviews.find(
    ({ request: r }) =>
      (user === CONTROLLER) === (r.userInfo.username === CONTROLLER) &&
      r.operation === operation &&
      r.kind.kind === kind &&
      r.name.startsWith(name),
  );
  if (found === undefined) throw new Error(`the capture has no ${user} ${operation} of ${kind} ${name}`);
  return structuredClone(found);
}

/**
 * The mix: what each entry is, its weight out of 100, whether ours allows it against the bench's classes
 * (test/unit/bench-mix.test.ts checks each), which captured review it is (who wrote it, the operation, the kind,
 * the name or its prefix) and, for a denial made from an allowed write, the one field its object changes.
 */
const ENTRIES = [
  ['snapshot create, class named', 30, true, 'user', 'CREATE', 'VolumeSnapshot', 'data-nightly'],
  ['snapshot create, default class', 15, true, 'user', 'CREATE', 'VolumeSnapshot', 'data-hourly'],
  ['snapshot create, pre-provisioned content', 5, true, 'user', 'CREATE', 'VolumeSnapshot', 'restored'],
  ['content create by the controller', 12, true, CONTROLLER, 'CREATE', 'VolumeSnapshotContent', 'snapcontent-'],
  ['content create, pre-provisioned', 3, true, 'user', 'CREATE', 'VolumeSnapshotContent', 'restored-content'],
  ['content update, the controller binds it', 8, true, CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'restored-content'],
  ['snapshot update, the controller sets the default class', 4, true, CONTROLLER, 'UPDATE', 'VolumeSnapshot', 'data-hourly'],
  ['content update by the controller', 3, true, CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'snapcontent-'],
  ['class create, not a default', 4, true, 'user', 'CREATE', 'VolumeSnapshotClass', 'csi-hostpath-archive'],
  ['class update, the default stays', 3, true, 'user', 'UPDATE', 'VolumeSnapshotClass', 'csi-hostpath-snapclass'],
  ['class create, a second default (denied)', 3, false, 'user', 'CREATE', 'VolumeSnapshotClass', 'second'],
  [
    'snapshot create with both sources (denied)',
    5,
    false,
    'user',
    'CREATE',
    'VolumeSnapshot',
    'data-nightly',
    (o) => (o.spec.source.volumeSnapshotContentName = 'restored-content'),
  ],
  [
    "content update changing the source's volume handle (denied)",
    5,
    false,
    CONTROLLER,
    'UPDATE',
    'VolumeSnapshotContent',
    'snapcontent-',
    (o) => (o.spec.source.volumeHandle = 'vol-other'),
  ],
];

/** The mix's entries, from the committed capture or from `file`, a new one. */
export function mixEntries(file = CAPTURED) {
  const { reviews } = JSON.parse(readFileSync(file, 'utf8'));
  return ENTRIES.map(([name, weight, allowed, user, operation, kind, prefix, change]) => {
    const review = captured(reviews, user, operation, kind, prefix);
    change?.(review.request.object);
    return { name, weight, allowed, review };
  });
}

/** 100 request bodies in a spread-out order (not all of one kind in a row). */
export function requestMix() {
  const bodies = [];
  for (const { weight, review } of mixEntries()) for (let i = 0; i < weight; i++) bodies.push(JSON.stringify(review));
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
