// The request mix: AdmissionReviews from the fixtures, weighted as a cluster sends them: VolumeSnapshot
// creates most, then content creates, updates, class creates (with default-class checks), and a few denials.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './servers.mjs';

const WEIGHTS = [
  // [fixture, weight out of 100]
  ['volumesnapshots/v1/create-pvc-source', 30],
  ['volumesnapshots/v1/create-no-class-uses-default', 15],
  ['volumesnapshots/v1/create-content-source', 5],
  ['volumesnapshotcontents/v1/create-dynamic', 12],
  ['volumesnapshotcontents/v1/create-pre-provisioned', 3],
  ['volumesnapshotcontents/v1/update-ref-binds-uid', 8],
  ['volumesnapshots/v1/update-class-name-changed', 4],
  ['volumesnapshotcontents/v1/update-volume-mode-set', 3],
  ['volumesnapshotclasses/v1/create-not-default', 4],
  ['volumesnapshotclasses/v1/update-default-stays-default', 3],
  ['volumesnapshotclasses/v1/create-second-default', 3],
  ['volumesnapshots/v1/create-both-sources', 5],
  ['volumesnapshotcontents/v1/update-volume-handle-changed', 5],
];

/** 100 request bodies in a spread-out order (not all of one kind in a row). */
export function requestMix() {
  const bodies = [];
  for (const [fixture, weight] of WEIGHTS) {
    const review = JSON.parse(readFileSync(`${ROOT}test/fixtures/admission/${fixture}.json`, 'utf8')).review;
    for (let i = 0; i < weight; i++) bodies.push(JSON.stringify(review));
  }
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
