import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, wireConversion } from './crds.js';
import { kube } from './kube.js';
import { stopAll, waitFor } from './processes.js';
import { startWebhook, untilCalled, registerWebhook, type TestWebhook } from './webhook.js';
import { filesUnder, readJson } from '../helpers/fixtures.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/admission/', import.meta.url));
/** Versions the installed CRDs serve; fixtures of other versions are covered by the unit suite. */
const SERVED = new Set(
  kube.celLive
    ? [
        'snapshot.storage.k8s.io/v1',
        'groupsnapshot.storage.k8s.io/v1beta1',
        'groupsnapshot.storage.k8s.io/v1beta2',
        'groupsnapshot.storage.k8s.io/v1',
      ]
    : [
        'snapshot.storage.k8s.io/v1',
        'snapshot.storage.k8s.io/v1beta1',
        'groupsnapshot.storage.k8s.io/v1beta1',
        'groupsnapshot.storage.k8s.io/v1beta2',
      ],
);
const CLUSTER_SCOPED = new Set([
  'volumesnapshotcontents',
  'volumesnapshotclasses',
  'volumegroupsnapshotcontents',
  'volumegroupsnapshotclasses',
]);
const NAMESPACE = 'team-a';

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-'));
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
t.teardown(async () => {
  if (process.env.E2E_DEBUG) console.error(webhook?.process.output().slice(-6000));
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

interface Target {
  group: string;
  version: string;
  plural: string;
}
type KubeObject = {
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string; annotations?: Record<string, string> };
} & Record<string, unknown>;

/** The apiserver's error message, from a client-node ApiException. */
function messageOf(error: unknown): string {
  const e = error as { body?: unknown; message?: string };
  const body =
    typeof e.body === 'string' ? (JSON.parse(e.body) as { message?: string }) : (e.body as { message?: string } | undefined);
  return body?.message ?? e.message ?? String(error);
}

let api: CustomObjectsApi;

async function create(target: Target, object: KubeObject): Promise<KubeObject> {
  if (CLUSTER_SCOPED.has(target.plural)) return (await api.createClusterCustomObject({ ...target, body: object })) as KubeObject;
  return (await api.createNamespacedCustomObject({ ...target, namespace: NAMESPACE, body: object })) as KubeObject;
}

async function replace(target: Target, object: KubeObject): Promise<KubeObject> {
  const name = object.metadata.name;
  if (CLUSTER_SCOPED.has(target.plural))
    return (await api.replaceClusterCustomObject({ ...target, name, body: object })) as KubeObject;
  return (await api.replaceNamespacedCustomObject({ ...target, namespace: NAMESPACE, name, body: object })) as KubeObject;
}

async function remove(target: Target, name: string): Promise<void> {
  await api.deleteClusterCustomObject({ ...target, name });
}

async function rejection(action: Promise<unknown>): Promise<string> {
  try {
    await action;
  } catch (error) {
    return messageOf(error);
  }
  return '(admitted)';
}

t.before(async () => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  api = kc.makeApiClient(CustomObjectsApi);
  await installCrds(kc, 'untyped');
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  webhook = await startWebhook(dir, cluster.kubeconfig);
  if (kube.celLive) await wireConversion(kc, webhook.port, webhook.caBundle);
});

interface Fixture {
  description: string;
  classes: string;
  options?: unknown;
  review: {
    request: { operation: string; resource: Target & { resource: string }; object?: KubeObject; oldObject?: KubeObject };
  };
  expect: { allowed: boolean; message?: string };
}

/** Fixtures whose answer does not depend on the class set or options, for versions the test CRDs serve. */
function portableFixtures(): { file: string; fixture: Fixture }[] {
  return filesUnder(FIXTURES)
    .map((file) => ({ file, fixture: readJson<Fixture>(file) }))
    .filter(({ fixture }) => {
      const { request } = fixture.review;
      const { group, version, resource } = request.resource;
      return (
        SERVED.has(`${group}/${version}`) &&
        fixture.classes === 'cluster' &&
        fixture.options === undefined &&
        !resource.endsWith('classes') &&
        request.object !== undefined &&
        (request.operation === 'CREATE' || (request.operation === 'UPDATE' && request.oldObject !== undefined))
      );
    });
}

/** A refusal by the CRD itself (schema or CEL), before any webhook: the apiserver's `is invalid` answer. */
const refusedByCrd = (outcome: string): boolean => outcome.includes(' is invalid: ') && !outcome.includes('admission webhook');

/**
 * The old object of every update case, written before the webhook is registered, as legacy objects on a real
 * cluster were. With CEL live, a legacy object that the CRD refuses cannot exist, so its update case cannot be
 * played: those are counted.
 */
async function storeOldObjects(
  cases: readonly { file: string; fixture: Fixture }[],
  targetOf: (f: Fixture) => Target,
): Promise<{ stored: Map<string, KubeObject>; oldRefused: number }> {
  const updates = cases.filter((c) => c.fixture.review.request.operation === 'UPDATE');
  const stored = new Map<string, KubeObject>();
  let oldRefused = 0;
  for (const [i, { file, fixture }] of updates.entries()) {
    const old = structuredClone(fixture.review.request.oldObject as KubeObject);
    old.metadata.name = uniqueName(`u${i}`, old.metadata.name);
    try {
      stored.set(file, await create(targetOf(fixture), old));
    } catch (error) {
      if (!kube.celLive || !refusedByCrd(messageOf(error))) throw error;
      oldRefused += 1;
    }
  }
  return { stored, oldRefused };
}

/**
 * A fixture's name made unique in the cluster. A group member's name keeps its shape (`snapshot-` and a SHA-256,
 * docs/rules.md), which its rule reads: it is hashed again with the prefix.
 */
function uniqueName(prefix: string, name: string): string {
  if (!/^snapshot-[0-9a-f]{64}$/.test(name)) return `${prefix}-${name}`;
  return `snapshot-${createHash('sha256')
    .update(prefix + name)
    .digest('hex')}`;
}

t.test('every rule of docs/rules.md, through the real apiserver', async (t) => {
  const cases = portableFixtures();
  t.ok(cases.length > 100, `${cases.length} fixtures apply to the served versions`);
  const targetOf = (f: Fixture): Target => ({
    group: f.review.request.resource.group,
    version: f.review.request.resource.version,
    plural: f.review.request.resource.resource,
  });
  const { stored, oldRefused } = await storeOldObjects(cases, targetOf);
  const admissionregistration = new KubeConfig();
  admissionregistration.loadFromFile((cluster as TestCluster).kubeconfig);
  const hook = webhook as TestWebhook;
  // Every request reaches the webhook, so that each rule is seen next to CEL: the component for CRDs without CEL.
  const everyRequest = kube.admissionPolicies ? ['without-match-conditions'] : [];
  await registerWebhook(admissionregistration, hook.port, hook.caBundle, everyRequest);
  await untilCalled(admissionregistration);

  const tally = { webhook: 0, admitted: 0, crdFirst: 0, crdStricter: 0, oldRefused };
  for (const [i, { file, fixture }] of cases.entries()) {
    const target = targetOf(fixture);
    const object = structuredClone(fixture.review.request.object as KubeObject);
    let action: Promise<unknown>;
    const previous = stored.get(file);
    if (fixture.review.request.operation === 'UPDATE' && previous === undefined) continue;
    if (previous !== undefined) {
      object.metadata.name = previous.metadata.name;
      object.metadata.resourceVersion = previous.metadata.resourceVersion;
      action = replace(target, object);
    } else {
      object.metadata.name = uniqueName(`c${i}`, object.metadata.name);
      action = create(target, object);
    }
    const outcome = await rejection(action);
    if (kube.celLive && refusedByCrd(outcome)) {
      // CEL or the schema answered first; only a rule the webhook would deny may be refused, or one CEL holds stricter.
      tally[fixture.expect.allowed ? 'crdStricter' : 'crdFirst'] += 1;
      if (fixture.expect.allowed) t.comment(`refused by the CRD, allowed by the webhook: ${fixture.description}: ${outcome}`);
      continue;
    }
    if (fixture.expect.allowed) {
      t.equal(outcome, '(admitted)', fixture.description);
      tally.admitted += 1;
    } else {
      t.ok(outcome.endsWith(`denied the request: ${fixture.expect.message}`), `${fixture.description}: ${outcome}`);
      tally.webhook += 1;
    }
  }
  t.comment(`${kube.version}: ${JSON.stringify(tally)}`);
  t.ok(tally.webhook >= (kube.celLive ? 10 : 60), `the webhook itself denied ${tally.webhook} fixtures`);
  t.ok(tally.admitted >= 40, `${tally.admitted} admitted`);
});

const SNAPSHOT_CLASSES: Target = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotclasses' };
const DEFAULT = 'snapshot.storage.kubernetes.io/is-default-class';
const snapshotClass = (name: string, driver: string, isDefault: boolean): KubeObject => ({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotClass',
  metadata: { name, ...(isDefault ? { annotations: { [DEFAULT]: 'true' } } : {}) },
  driver,
  deletionPolicy: 'Delete',
});

/** Retries while the watch has not shown our last write yet (the decision is as good as the cache). */
async function eventually(what: string, action: () => Promise<unknown>): Promise<string> {
  let outcome = '';
  await waitFor(
    what,
    async () => {
      outcome = await rejection(action());
      return outcome === '(admitted)';
    },
    5_000,
    100,
  ).catch(() => undefined);
  return outcome;
}

/**
 * A second default's denial names the first: "already exists" once the watch has reported the first, "was just
 * admitted" while only the replicas' claim knows it (docs/rules.md, "Agreement across replicas"). Which one a
 * request meets depends on when the watch event arrives, so either is right.
 */
function namesFirstDefault(denial: string, prefix: string, first: string, driver: string): boolean {
  const tail = [
    `already exists for driver: ${driver}`,
    `was just admitted for driver: ${driver}; make only one class the default (`,
    `was claimed for driver: ${driver} `,
  ];
  return tail.some((end) => denial.includes(`denied the request: ${prefix}: ${first} ${end}`));
}

t.test('one default class per driver, kept from the live cluster', async (t) => {
  const driver = 'first.csi.example.com';
  t.equal(await rejection(create(SNAPSHOT_CLASSES, snapshotClass('gold', driver, true))), '(admitted)', 'first default');
  t.equal(await rejection(create(SNAPSHOT_CLASSES, snapshotClass('silver', driver, false))), '(admitted)', 'a non-default');
  const second = await rejection(create(SNAPSHOT_CLASSES, snapshotClass('platinum', driver, true)));
  t.ok(namesFirstDefault(second, 'default snapshot class', 'gold', driver), second);

  const gold = (await api.getClusterCustomObject({ ...SNAPSHOT_CLASSES, name: 'gold' })) as KubeObject;
  delete gold.metadata.annotations?.[DEFAULT];
  t.equal(await rejection(replace(SNAPSHOT_CLASSES, gold)), '(admitted)', 'the default annotation is removed from gold');
  const silverNow = async (): Promise<unknown> => {
    const silver = (await api.getClusterCustomObject({ ...SNAPSHOT_CLASSES, name: 'silver' })) as KubeObject;
    silver.metadata.annotations = { [DEFAULT]: 'true' };
    return replace(SNAPSHOT_CLASSES, silver);
  };
  t.equal(await eventually('silver becomes the default', silverNow), '(admitted)', 'switched the default to silver');

  await remove(SNAPSHOT_CLASSES, 'silver');
  t.equal(
    await eventually('a new default after the delete', () => create(SNAPSHOT_CLASSES, snapshotClass('bronze', driver, true))),
    '(admitted)',
    'the watch saw the delete',
  );

  const group: Target = { group: 'groupsnapshot.storage.k8s.io', version: 'v1beta2', plural: 'volumegroupsnapshotclasses' };
  const groupClass = (name: string): KubeObject => ({
    apiVersion: 'groupsnapshot.storage.k8s.io/v1beta2',
    kind: 'VolumeGroupSnapshotClass',
    metadata: { name, annotations: { 'groupsnapshot.storage.kubernetes.io/is-default-class': 'true' } },
    driver,
    deletionPolicy: 'Delete',
  });
  t.equal(await rejection(create(group, groupClass('group-gold'))), '(admitted)', 'a default group class');
  const groupSecond = await rejection(create(group, groupClass('group-silver')));
  t.ok(namesFirstDefault(groupSecond, 'default group snapshot class', 'group-gold', driver), groupSecond);
});

t.test("docs/install.md's command that lists default classes works when pasted into a shell", async (t) => {
  const command = /^kubectl get volumesnapshotclass -o .*custom-columns.*$/m.exec(readFileSync('docs/install.md', 'utf8'))?.[0];
  if (command === undefined) throw new Error('docs/install.md no longer has the command');
  const out = execFileSync('bash', ['-c', command], {
    env: { ...process.env, KUBECONFIG: (cluster as TestCluster).kubeconfig },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.match(out, /^bronze +first\.csi\.example\.com +true$/m, out);
});

t.test('20 concurrent default creates for one new driver: exactly one is admitted', async (t) => {
  const driver = 'race.csi.example.com';
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => rejection(create(SNAPSHOT_CLASSES, snapshotClass(`race-${i}`, driver, true)))),
  );
  const admitted = results.filter((r) => r === '(admitted)');
  t.equal(admitted.length, 1, 'one admitted');
  const denials = results.filter((r) => r !== '(admitted)');
  t.ok(
    denials.every((r) =>
      /denied the request: default snapshot class: race-\d+ (already exists|was just admitted|was claimed) for driver: race\.csi\.example\.com($|; to move the default, first remove it from race-\d+: |; make only one class the default| \d+ s ago and has not appeared yet; make only one class the default)/.test(
        r,
      ),
    ),
    'the others name the winner',
  );
});

/**
 * An UPDATE that the webhook itself denies on this release: a snapshot's source on 1.20; with CEL live, the CRD
 * refuses that first, so a content's bound reference uid (KEP-1900; the v8.6.0 CRDs do not check it).
 */
const deniedUpdate = kube.celLive
  ? {
      target: { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotcontents' },
      namespace: 'default',
      object: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotContent',
        metadata: { name: 'evented' },
        spec: {
          driver: 'd',
          deletionPolicy: 'Retain',
          source: { snapshotHandle: 'h' },
          volumeSnapshotRef: { name: 'snap', namespace: NAMESPACE, uid: 'u-1' },
        },
      },
      change: (o: KubeObject) => ((o.spec as { volumeSnapshotRef: { uid: string } }).volumeSnapshotRef.uid = 'u-2'),
      message: 'Spec.VolumeSnapshotRef.UID is immutable but was changed from u-1 to u-2',
    }
  : {
      target: { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots' },
      namespace: NAMESPACE,
      object: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name: 'evented', namespace: NAMESPACE },
        spec: { source: { persistentVolumeClaimName: 'pvc-1' } },
      },
      change: (o: KubeObject) => ((o.spec as { source: Record<string, string> }).source.persistentVolumeClaimName = 'pvc-2'),
      message: 'Spec.Source.PersistentVolumeClaimName is immutable but was changed from pvc-1 to pvc-2',
    };

t.test('a denied UPDATE leaves a FailedValidation event on the object', async (t) => {
  const { target, namespace, change, message: expected } = deniedUpdate;
  const stored = await create(target, deniedUpdate.object as KubeObject);
  change(stored);
  const denied = await rejection(replace(target, stored));
  t.match(denied, `denied the request: ${expected}`);
  const kc = new KubeConfig();
  kc.loadFromFile((cluster as TestCluster).kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  let message = '';
  await waitFor(
    'the denial event',
    async () => {
      const events = await core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=evented' });
      const found = events.items.find((e) => e.reason === 'FailedValidation');
      message = found?.message ?? '';
      return found !== undefined && found.type === 'Warning' && found.involvedObject.uid === stored.metadata.uid;
    },
    5_000,
  );
  t.equal(message, `update denied by snapshot-webhook: ${expected}`);
});
