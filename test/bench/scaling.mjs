// How a default-class decision scales with the number of classes in the cache: p99 of one decision
// (reviewAdmission of a VolumeSnapshotClass create that needs the default-class check), in process.
import { reviewAdmission } from '../../dist/admission/review.js';
import { ClassIndex } from '../../dist/classes/class-index.js';
import { admissionReview, SNAPSHOT_CLASS_V1 } from '../helpers/review.mjs';

const review = (name, driver) =>
  admissionReview(SNAPSHOT_CLASS_V1, {
    dryRun: true,
    object: {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name, annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
      driver,
      deletionPolicy: 'Delete',
    },
  });

export async function decisionP99(classCount, decisions = 20_000) {
  const index = new ClassIndex();
  const drivers = Math.max(1, Math.floor(classCount / 10));
  index.replaceAll(
    'VolumeSnapshotClass',
    Array.from({ length: classCount }, (_, i) => ({
      metadata: {
        name: `c${i}`,
        ...(i < drivers ? { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } } : {}),
      },
      driver: `d${i % drivers}`,
    })),
  );
  const deps = {
    classes: index,
    options: { preventVolumeModeConversion: true },
    modes: { mode: 'enforce', warnRules: new Set() },
  };
  // Half deny (the driver has a default), half allow (a new driver): both paths of the rule.
  const bodies = [review('new', 'd0'), review('new', 'fresh.csi.example.com')].map((r) => JSON.stringify(r));
  const times = new Float64Array(decisions);
  for (let i = 0; i < 2000; i++) await reviewAdmission(JSON.parse(bodies[i % 2]), deps); // warm-up
  for (let i = 0; i < decisions; i++) {
    const body = JSON.parse(bodies[i % 2]);
    const t0 = process.hrtime.bigint();
    await reviewAdmission(body, deps);
    times[i] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  times.sort();
  return { p50us: times[Math.floor(decisions * 0.5)], p99us: times[Math.floor(decisions * 0.99)] };
}
