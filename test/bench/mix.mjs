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

/** A captured review with one field of its object changed (the change a denied write makes). */
function changed(review, change) {
  change(review.request.object);
  return review;
}

/**
 * The mix's entries: what each is, its weight out of 100, and whether ours allows it against the bench's classes
 * (test/unit/bench-mix.test.ts checks each), from the committed capture or from `file`, a new one.
 */
export function mixEntries(file = CAPTURED) {
  const { reviews } = JSON.parse(readFileSync(file, 'utf8'));
  const pick = (user, operation, kind, name) => captured(reviews, user, operation, kind, name);
  return [
    {
      name: 'snapshot create, class named',
      weight: 30,
      allowed: true,
      review: pick('user', 'CREATE', 'VolumeSnapshot', 'data-nightly'),
    },
    {
      name: 'snapshot create, default class',
      weight: 15,
      allowed: true,
      review: pick('user', 'CREATE', 'VolumeSnapshot', 'data-hourly'),
    },
    {
      name: 'snapshot create, pre-provisioned content',
      weight: 5,
      allowed: true,
      review: pick('user', 'CREATE', 'VolumeSnapshot', 'restored'),
    },
    {
      name: 'content create by the controller',
      weight: 12,
      allowed: true,
      review: pick(CONTROLLER, 'CREATE', 'VolumeSnapshotContent', 'snapcontent-'),
    },
    {
      name: 'content create, pre-provisioned',
      weight: 3,
      allowed: true,
      review: pick('user', 'CREATE', 'VolumeSnapshotContent', 'restored-content'),
    },
    {
      name: 'content update, the controller binds it',
      weight: 8,
      allowed: true,
      review: pick(CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'restored-content'),
    },
    {
      name: 'snapshot update, the controller sets the default class',
      weight: 4,
      allowed: true,
      review: pick(CONTROLLER, 'UPDATE', 'VolumeSnapshot', 'data-hourly'),
    },
    {
      name: 'content update by the controller',
      weight: 3,
      allowed: true,
      review: pick(CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'snapcontent-'),
    },
    {
      name: 'class create, not a default',
      weight: 4,
      allowed: true,
      review: pick('user', 'CREATE', 'VolumeSnapshotClass', 'csi-hostpath-archive'),
    },
    {
      name: 'class update, the default stays',
      weight: 3,
      allowed: true,
      review: pick('user', 'UPDATE', 'VolumeSnapshotClass', 'csi-hostpath-snapclass'),
    },
    {
      name: 'class create, a second default (denied)',
      weight: 3,
      allowed: false,
      review: pick('user', 'CREATE', 'VolumeSnapshotClass', 'second'),
    },
    {
      name: 'snapshot create with both sources (denied)',
      weight: 5,
      allowed: false,
      review: changed(pick('user', 'CREATE', 'VolumeSnapshot', 'data-nightly'), (o) => {
        o.spec.source.volumeSnapshotContentName = 'restored-content';
      }),
    },
    {
      name: "content update changing the source's volume handle (denied)",
      weight: 5,
      allowed: false,
      review: changed(pick(CONTROLLER, 'UPDATE', 'VolumeSnapshotContent', 'snapcontent-'), (o) => {
        o.spec.source.volumeHandle = 'vol-other';
      }),
    },
  ];
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
