// One default class per driver across two replicas (docs/cluster.md, "Agreement across replicas"): two webhook
// processes behind a round-robin TCP proxy on loopback, registered with the real apiserver through the
// project's ValidatingWebhookConfiguration pointed at the proxy.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AdmissionregistrationV1Api, CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { devCertPaths } from '../../src/certs/dev-certs.js';
import { CLASS_KIND_FACTS } from '../../src/classes/class-kinds.js';
import { CLAIM_WINDOW_MS, CLAIMS_ANNOTATION, readClaims } from '../../src/classes/default-claims.js';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds } from './crds.js';
import { kube } from './kube.js';
import { freePort, stopAll, waitFor } from './processes.js';
import { roundRobin, type RoundRobin } from './round-robin.js';
import { klass, rejection, snapshotObjects, VS, VSCLASS, type Obj } from './snapshot-objects.js';
import { followDecisions, startWebhook, untilCalled, registerWebhook, type DecisionLine, type TestWebhook } from './webhook.js';

const NAMESPACE = 'snapshot-webhook';
const LEASE = CLASS_KIND_FACTS.VolumeSnapshotClass.claimLease;
const ADMIN = 'e2e-admin';
const DENY_LABEL = 'e2e-deny';

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-replicas-'));
let cluster: TestCluster | undefined;
const replicas: TestWebhook[] = [];
let proxy: RoundRobin | undefined;
let denier: HttpsServer | undefined;
t.teardown(async () => {
  // E2E_DEBUG: each replica's log without its decision lines (the watches, the claims, the Lease).
  if (process.env.E2E_DEBUG)
    for (const r of replicas)
      console.error(
        r.process
          .output()
          .split('\n')
          .filter((line) => !line.includes('"allowed":'))
          .join('\n')
          .slice(-12000),
      );
  await proxy?.close();
  denier?.close();
  for (const r of replicas) await r.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A second validating webhook that denies every labelled class: an admitted default that never reaches storage. */
async function startDenier(): Promise<{ server: HttpsServer; port: number }> {
  const paths = devCertPaths(join(dir, 'webhook-certs'));
  const server = createHttpsServer({ cert: readFileSync(paths.certFile), key: readFileSync(paths.keyFile) }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as { request: { uid: string } };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: false, status: { code: 403, message: 'denied by the e2e denier' } },
        }),
      );
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, port };
}

let kc: KubeConfig;
let objects: ReturnType<typeof snapshotObjects>;
const decisions: (() => readonly DecisionLine[])[] = [];

async function leaseVersion(): Promise<string | undefined> {
  const leases = kc.makeApiClient(CoordinationV1Api);
  return leases.readNamespacedLease({ name: LEASE, namespace: NAMESPACE }).then(
    (lease) => lease.metadata?.resourceVersion,
    () => undefined,
  );
}

async function startReplica(index: number, port?: number): Promise<TestWebhook> {
  const replica = await startWebhook(dir, (cluster as TestCluster).kubeconfig, [`--namespace=${NAMESPACE}`], true, port);
  replicas[index] = replica;
  decisions[index] = followDecisions(replica.process, ADMIN);
  return replica;
}

t.before(async () => {
  cluster = await startCluster(dir);
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  objects = snapshotObjects(kc);
  await installCrds(kc, 'untyped');
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'team-a' } } });
  const [a, b] = [await startReplica(0), await startReplica(1)];
  proxy = await roundRobin([a.port, b.port]);
  const denied = await startDenier();
  denier = denied.server;
  const hooks = kc.makeApiClient(AdmissionregistrationV1Api);
  await registerWebhook(kc, proxy.port, a.caBundle);
  await hooks.createValidatingWebhookConfiguration({
    body: {
      metadata: { name: 'e2e-denier' },
      webhooks: [
        {
          name: 'denier.e2e.example.com',
          clientConfig: { url: `https://127.0.0.1:${denied.port}/deny`, caBundle: a.caBundle },
          rules: [
            {
              apiGroups: ['snapshot.storage.k8s.io'],
              apiVersions: ['v1'],
              resources: ['volumesnapshotclasses'],
              operations: ['CREATE'],
            },
          ],
          objectSelector: { matchLabels: { [DENY_LABEL]: 'true' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
        },
      ],
    },
  });
  await untilCalled(kc, 'webhook registered through the proxy');
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** 50 concurrent creates of a default class for one new driver; the outcome of each. */
async function race(driver: string, prefix: string): Promise<string[]> {
  return Promise.all(
    Array.from({ length: 50 }, (_, i) => rejection(objects.create(VSCLASS, klass(VSCLASS, `${prefix}-${i}`, driver, true)))),
  );
}

async function defaultsOf(driver: string): Promise<string[]> {
  const annotation = 'snapshot.storage.kubernetes.io/is-default-class';
  return (await objects.list(VSCLASS))
    .filter((c) => (c as Obj & { driver?: string }).driver === driver && c.metadata.annotations?.[annotation] === 'true')
    .map((c) => c.metadata.name);
}

/** How the denials of a race read, counted by their kind. */
const KINDS: readonly [string, RegExp][] = [
  ['admitted', /^\(admitted\)$/],
  ['default-class-unique', /was just admitted for driver|was claimed for driver|already exists for driver/],
  ['default-claim-unavailable', /cannot record .* across the webhook's replicas/],
  ['class-cache-unavailable', /cannot check whether another default/],
];

function tally(outcomes: readonly string[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const o of outcomes) {
    const kind = KINDS.find(([, pattern]) => pattern.test(o))?.[0] ?? 'other';
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

t.test('50 concurrent default creates for one new driver admit exactly one, for 10 drivers in a row', async (t) => {
  const before = (decisions as (() => readonly DecisionLine[])[]).map((d) => d().length);
  for (let d = 0; d < 10; d += 1) {
    const driver = `race-${d}.csi.example.com`;
    const outcomes = await race(driver, `race-${d}`);
    const kinds = tally(outcomes);
    t.equal(kinds.admitted, 1, `${driver}: exactly one admitted (${JSON.stringify(kinds)})`);
    t.equal(kinds.other, undefined, 'every denial is one of the documented ones');
    await waitFor(`${driver} stored`, async () => (await defaultsOf(driver)).length === 1, 5_000);
  }
  const decided = decisions.map((d, i) => d().length - (before[i] ?? 0));
  t.ok(
    decided.every((n) => n > 0),
    `both replicas decided default-class creates (${decided.join(' and ')} decisions)`,
  );
  // A validating webhook sees the object's uid on CREATE: the claim names the object that was stored.
  const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: LEASE, namespace: NAMESPACE });
  const claims = [...readClaims(lease.metadata?.annotations?.[CLAIMS_ANNOTATION]).values()];
  const last = claims.find((c) => c.driver === 'race-9.csi.example.com');
  const stored = await objects.get(VSCLASS, last?.class ?? '(none)');
  t.equal(last?.uid, stored.metadata.uid, 'the claim holds the uid of the stored class');
  t.ok(lease.spec?.holderIdentity, 'the Lease names the replica that wrote last');
});

t.test('the same while one replica is restarted mid-run', async (t) => {
  const second = replicas[1] as TestWebhook;
  let exitCode: number | null = -1;
  const restart = (async () => {
    await sleep(300);
    exitCode = await second.process.stop('SIGTERM');
    await startReplica(1, second.port);
  })();
  for (let d = 0; d < 10; d += 1) {
    const driver = `restart-${d}.csi.example.com`;
    const outcomes = await race(driver, `restart-${d}`);
    const kinds = tally(outcomes);
    t.equal(kinds.admitted, 1, `${driver}: exactly one admitted (${JSON.stringify(kinds)})`);
    await waitFor(`${driver} stored`, async () => (await defaultsOf(driver)).length === 1, 5_000);
  }
  await restart;
  t.equal(exitCode, 0, 'the replica drained and exited on SIGTERM');
  const restarted = replicas[1] as TestWebhook;
  t.not(restarted, second, 'a new process');
  t.ok(await restarted.ready(), 'the restarted replica is ready again');
  t.ok((decisions[1]?.().length ?? 0) > 0, `the restarted replica decided ${decisions[1]?.().length} requests of the run`);
});

t.test('a claim whose class never reached storage stops blocking after the window', async (t) => {
  const driver = 'lost.csi.example.com';
  const lost = klass(VSCLASS, 'lost-default', driver, true);
  lost.metadata.labels = { [DENY_LABEL]: 'true' };
  t.match(await rejection(objects.create(VSCLASS, lost)), 'denied by the e2e denier', 'another webhook denies it');
  const blockedAt = Date.now();
  const next = (): Promise<string> => rejection(objects.create(VSCLASS, klass(VSCLASS, 'real-default', driver, true)));
  t.match(
    await next(),
    /lost-default was claimed for driver: lost\.csi\.example\.com \d+ s ago and has not appeared yet; .*retry in \d+ s/,
    'blocked at first',
  );
  let outcome = '';
  await waitFor(
    'the claim to lapse',
    async () => {
      outcome = await next();
      return outcome === '(admitted)';
    },
    CLAIM_WINDOW_MS + 10_000,
    1_000,
  );
  const seconds = (Date.now() - blockedAt) / 1000;
  t.ok(seconds < CLAIM_WINDOW_MS / 1000 + 10, `admitted ${seconds.toFixed(1)} s later (window ${CLAIM_WINDOW_MS / 1000} s)`);
  t.same(await defaultsOf(driver), ['real-default']);
});

t.test('moving the default from one class to another works', async (t) => {
  const driver = 'move.csi.example.com';
  const annotation = 'snapshot.storage.kubernetes.io/is-default-class';
  await objects.create(VSCLASS, klass(VSCLASS, 'move-a', driver, true));
  await objects.create(VSCLASS, klass(VSCLASS, 'move-b', driver, false));
  const add = async (): Promise<string> => {
    const b = await objects.get(VSCLASS, 'move-b');
    b.metadata.annotations = { ...b.metadata.annotations, [annotation]: 'true' };
    return rejection(objects.replace(VSCLASS, b));
  };
  t.match(await add(), 'default snapshot class: move-a', 'a second default is denied while move-a is one');
  const a = await objects.get(VSCLASS, 'move-a');
  delete a.metadata.annotations?.[annotation];
  t.equal(await rejection(objects.replace(VSCLASS, a)), '(admitted)', 'removing the default is never blocked');
  let outcome = '';
  // The replica that answers may see the removal a moment later (its watch): retry briefly.
  await waitFor(
    'move-b to become the default',
    async () => {
      outcome = await add();
      return outcome === '(admitted)';
    },
    5_000,
    200,
  );
  t.same(await defaultsOf(driver), ['move-b'], outcome);
});

t.test('dry-run creates read the Lease and never write it', async (t) => {
  const before = await leaseVersion();
  t.ok(before, 'the Lease exists');
  const api = objects.api;
  for (let i = 0; i < 10; i += 1) {
    const body = klass(VSCLASS, `dry-${i}`, `dry-${i}.csi.example.com`, true);
    const { group, version, plural } = VSCLASS;
    t.equal(
      await rejection(api.createClusterCustomObject({ group, version, plural, body, dryRun: 'All' })),
      '(admitted)',
      `dry run ${i} admitted`,
    );
  }
  t.equal(await leaseVersion(), before, 'the Lease resourceVersion is unchanged');
  t.same(await defaultsOf('dry-0.csi.example.com'), [], 'nothing stored');
});

t.test('the cost: only default-class writes take the claim', async (t) => {
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
  const marks = decisions.map((d) => d().length);
  const versionBefore = await leaseVersion();
  for (let i = 0; i < 30; i += 1) {
    await objects.create(VSCLASS, klass(VSCLASS, `plain-${i}`, `cost-${i}.csi.example.com`, false));
    await rejection(
      objects.create(VS, { metadata: { name: `snap-${i}` }, spec: { source: { persistentVolumeClaimName: 'pvc' } } }),
    );
  }
  t.equal(await leaseVersion(), versionBefore, '60 writes that make no default leave the Lease alone');
  for (let i = 0; i < 30; i += 1)
    await objects.create(VSCLASS, klass(VSCLASS, `claimed-${i}`, `cost-${i}.csi.example.com`, true));
  const ms = (prefix: string): number[] =>
    decisions
      .flatMap((d, i) => d().slice(marks[i]))
      .filter((l) => l.name?.startsWith(prefix) && l.operation === 'CREATE')
      .map((l) => l.ms);
  // Decision lines are written after the answer: wait for the last ones to be read.
  await waitFor('the decision lines', async () => ms('claimed-').length === 30, 5_000);
  const [plain, snaps, claimed] = [ms('plain-'), ms('snap-'), ms('claimed-')];
  const figures = {
    defaultClassCreateMs: median(claimed),
    otherClassCreateMs: median(plain),
    snapshotCreateMs: median(snaps),
  };
  t.comment(`decision medians (ms), two replicas on loopback: ${JSON.stringify(figures)}`);
  t.ok(Number.isFinite(figures.defaultClassCreateMs), 'measured');
  // With matchConditions (1.30+), writes that make no default never reach the webhook.
  if (kube.admissionPolicies) t.same([plain.length, snaps.length], [0, 0], 'the other writes were not sent to the webhook');
  else t.ok(Number.isFinite(figures.otherClassCreateMs), 'the other class creates measured too');
});
