import t from 'tap';
import { ApiserverError } from '../../src/cluster/apiserver-error.js';
import { ClassIndex } from '../../src/classes/class-index.js';
import { CLASS_KIND_FACTS } from '../../src/classes/class-kinds.js';
import { CLAIM_WINDOW_MS, CLAIMS_ANNOTATION, readClaims } from '../../src/classes/default-claims.js';
import { CLAIM_BUDGET_MS, LeaseDefaultAgreement } from '../../src/cluster/default-agreement.js';
import type { Lease, LeaseStore } from '../../src/cluster/lease-store.js';
import { createLogger } from '../../src/log/logger.js';
import { claimFinding, type AdmittedClass } from '../../src/rules/default-claim.js';
import { memoryLog } from '../helpers/review-deps.js';

/** Leases in memory with the apiserver's optimistic concurrency: a write at an old resourceVersion is a 409. */
class MemoryLeases implements LeaseStore {
  readonly namespace = 'snapshot-webhook';
  readonly leases = new Map<string, Lease>();
  writes = 0;
  clock = 1_000_000;
  fail: { status: number } | undefined;
  hang = false;
  /** A write that is answered by nobody within the claim budget, and lands this long after it (a stalled etcd). */
  landLateByMs = 0;
  landed: number | undefined;

  private async turn(): Promise<void> {
    // Let other claims run between a read and a write, as the network would.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.hang) await new Promise((resolve) => setTimeout(resolve, CLAIM_BUDGET_MS + 500));
    if (this.fail !== undefined) throw new ApiserverError(`HTTP ${this.fail.status}`, this.fail.status);
  }

  async read(name: string): Promise<{ lease: Lease | undefined; now: number }> {
    await this.turn();
    const lease = this.leases.get(name);
    return { lease: lease === undefined ? undefined : structuredClone(lease), now: this.clock };
  }

  async write(lease: Lease): Promise<void> {
    if (this.landLateByMs > 0) {
      const late = this.landLateByMs;
      setTimeout(() => {
        this.apply(lease);
        this.landed = Date.now();
      }, CLAIM_BUDGET_MS + late);
      return new Promise(() => undefined);
    }
    await this.turn();
    this.apply(lease);
  }

  private apply(lease: Lease): void {
    const current = this.leases.get(lease.metadata.name);
    if (current?.metadata.resourceVersion !== lease.metadata.resourceVersion) {
      throw new ApiserverError('HTTP 409', 409, 'Conflict');
    }
    this.writes += 1;
    this.leases.set(
      lease.metadata.name,
      structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(this.writes) } }),
    );
  }

  claims(): string[] {
    const lease = this.leases.get(CLASS_KIND_FACTS.VolumeSnapshotClass.claimLease);
    return [...readClaims(lease?.metadata.annotations?.[CLAIMS_ANNOTATION]).values()].map((c) => `${c.driver}=${c.class}`).sort();
  }
}

const KIND = 'VolumeSnapshotClass';
const write = (name: string, driver: string): AdmittedClass => ({
  kind: KIND,
  object: {
    metadata: { name, uid: `uid-${name}`, annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
    driver,
  },
  becomesDefault: true,
});

/** The claim's answer as the default-class rule words it (undefined when recorded). */
async function judged(agreement: LeaseDefaultAgreement | undefined, write: AdmittedClass, dryRun: boolean) {
  if (agreement === undefined) throw new Error('no such replica');
  return claimFinding(write, await agreement.claim(write, dryRun));
}

function replica(store: LeaseStore, healthy = true) {
  const index = new ClassIndex();
  index.replaceAll(KIND, []);
  const log = memoryLog();
  const agreement = new LeaseDefaultAgreement({
    store,
    index,
    healthy: () => healthy,
    logger: createLogger('info', log.stream),
    identity: 'test',
  });
  return { index, agreement, log };
}

t.test('50 concurrent defaults for one driver on two replicas: exactly one is agreed, for 10 drivers', async (t) => {
  const store = new MemoryLeases();
  const replicas = [replica(store), replica(store)];
  for (let d = 0; d < 10; d++) {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => judged(replicas[i % 2]?.agreement, write(`c${d}-${i}`, `driver-${d}`), false)),
    );
    const taken = answers.filter((a) => a === undefined).length;
    t.equal(taken, 1, `driver-${d}: one claim taken`);
    t.ok(
      answers.every((a) => a === undefined || (a.rule === 'default-class-unique' && a.conflictsWith !== undefined)),
      'every other one is denied by the default-class rule, naming the holder',
    );
  }
  t.equal(store.claims().length, 10, 'one claim per driver in one Lease');
});

t.test('the message says who holds the driver and when to retry', async (t) => {
  const store = new MemoryLeases();
  const { agreement } = replica(store);
  t.equal(await judged(agreement, write('gold', 'd'), false), undefined);
  store.clock += 4_000;
  const denied = await judged(agreement, write('silver', 'd'), false);
  t.equal(
    denied?.message,
    'default snapshot class: gold was claimed for driver: d 4 s ago and has not appeared yet; ' +
      'make only one class the default (if gold is not created after all, retry in 11 s)',
  );
  store.clock += CLAIM_WINDOW_MS;
  t.equal(
    await judged(agreement, write('silver', 'd'), false),
    undefined,
    'after the window, a class never stored is taken over',
  );
});

t.test('drain waits for the claims in flight, and for nothing when there are none', async (t) => {
  const store = new MemoryLeases();
  const { agreement } = replica(store);
  const order: string[] = [];
  const claims = [write('gold', 'd'), write('x', 'other')].map((w) =>
    agreement.claim(w, false).then((a) => order.push(`claimed ${w.object.metadata.name ?? ''}: ${a.outcome}`)),
  );
  await agreement.drain().then(() => order.push('drained'));
  await Promise.all(claims);
  t.same(order, ['claimed gold: recorded', 'claimed x: recorded', 'drained']);
  await t.resolves(agreement.drain(), 'drained again: its Leases released once more');
  // A replica that never claimed: drained before a macrotask runs, so no timer or claim is waited for.
  const idle = replica(new MemoryLeases()).agreement;
  const first = await Promise.race([
    idle.drain().then(() => 'drained'),
    new Promise<string>((resolve) => setImmediate(() => resolve('still waiting'))),
  ]);
  t.equal(first, 'drained', 'an idle agreement drains at once');
});

t.test('dry runs read and never write', async (t) => {
  const store = new MemoryLeases();
  const { agreement } = replica(store);
  t.equal(await judged(agreement, write('gold', 'd'), true), undefined);
  t.equal(store.writes, 0);
  await judged(agreement, write('gold', 'd'), false);
  t.equal((await judged(agreement, write('silver', 'd'), true))?.rule, 'default-class-unique', 'a dry run sees the claim');
  t.equal(store.writes, 1);
});

t.test('never admit without the claim: every failure is a 503 that says why', async (t) => {
  const cases: [string, (store: MemoryLeases) => void, boolean, RegExp][] = [
    [
      'forbidden',
      (s) => (s.fail = { status: 403 }),
      true,
      /may not get leases in namespace snapshot-webhook \(RBAC: grant get, create and update\)/,
    ],
    ['apiserver error', (s) => (s.fail = { status: 500 }), true, /cannot get leases in namespace snapshot-webhook: HTTP 500/],
    [
      'no answer in time',
      (s) => (s.hang = true),
      true,
      // The wait the read had: what was left of the claim's 3000 ms when it began (under load, a millisecond less).
      /cannot get leases in namespace snapshot-webhook: no answer from the apiserver within (29\d\d|3000) ms/,
    ],
    ['cache not healthy', () => undefined, false, /the VolumeSnapshotClass cache is not synced with a healthy watch/],
  ];
  for (const [name, breakIt, healthy, message] of cases) {
    const store = new MemoryLeases();
    breakIt(store);
    const { agreement, log } = replica(store, healthy);
    const started = Date.now();
    const finding = await judged(agreement, write('gold', 'd'), false);
    t.equal(finding?.rule, 'default-claim-unavailable', name);
    t.equal(finding?.code, 503, name);
    t.match(
      finding?.message,
      /^cannot record gold as the default VolumeSnapshotClass for driver d across the webhook's replicas: /,
    );
    t.match(finding?.message, message, name);
    t.ok(Date.now() - started < CLAIM_BUDGET_MS + 1_000, `${name}: answered within the budget`);
    t.equal(store.writes, 0, `${name}: nothing written`);
    t.match(log.lines.at(-1), { msg: 'default-class claim not recorded; denied with 503' });
  }
});

t.test('a conflict is read again and decided again', async (t) => {
  const store = new MemoryLeases();
  const { agreement } = replica(store);
  const other = replica(store).agreement;
  await judged(other, write('x', 'other-driver'), false);
  // Another replica writes between our read and our write: our first write is a 409.
  const write0 = store.write.bind(store);
  let moved = false;
  store.write = async (lease) => {
    if (!moved) {
      moved = true;
      await judged(other, write('y', 'third-driver'), false);
    }
    return write0(lease);
  };
  t.equal(await judged(agreement, write('gold', 'd'), false), undefined);
  t.same(store.claims(), ['d=gold', 'other-driver=x', 'third-driver=y'], 'no claim lost to the conflict');
});

t.test('drain releases the Leases this replica holds; the claims stay, and a Lease another replica holds is left', async (t) => {
  const store = new MemoryLeases();
  const name = CLASS_KIND_FACTS.VolumeSnapshotClass.claimLease;
  const { agreement, log } = replica(store);
  t.equal(await judged(agreement, write('gold', 'd.example.com'), false), undefined, 'recorded');
  t.equal(store.leases.get(name)?.spec?.holderIdentity, 'test', 'named as the holder while it runs');
  await agreement.drain();
  t.equal(store.leases.get(name)?.spec?.holderIdentity, undefined, 'released');
  t.equal(store.leases.get(name)?.spec?.renewTime, undefined);
  t.same(store.claims(), ['d.example.com=gold'], 'the claim stays');
  t.ok(log.lines.some((l) => String(l.msg).startsWith('default-class Lease released')));

  const other = new LeaseDefaultAgreement({
    store,
    index: ClassIndex.withNoClasses(),
    healthy: () => true,
    logger: createLogger('info', memoryLog().stream),
    identity: 'other',
  });
  const first = replica(store);
  t.equal(await judged(first.agreement, write('silver', 's.example.com'), false), undefined);
  t.equal(await judged(other, write('bronze', 'b.example.com'), false), undefined, 'another replica writes last');
  await first.agreement.drain();
  t.equal(store.leases.get(name)?.spec?.holderIdentity, 'other', 'a Lease another replica holds is left alone');
});

t.test('a claim whose write lands after its request was refused is withdrawn: the next default is not held up', async (t) => {
  const store = new MemoryLeases();
  const { agreement, log } = replica(store);
  t.teardown(() => agreement.drain());
  store.landLateByMs = 500;
  const refused = await judged(agreement, write('gold', 'd'), false);
  t.equal(refused?.rule, 'default-claim-unavailable', 'no answer within the budget: gold is refused with a 503');
  store.landLateByMs = 0;
  await new Promise((resolve) => setTimeout(resolve, 600));
  t.same(store.claims(), ['d=gold'], 'then its write lands anyway');
  const landed = store.landed ?? Date.now();
  const answers: string[] = [];
  let silver = await judged(agreement, write('silver', 'd'), false);
  while (silver !== undefined && Date.now() - landed < 5_000) {
    answers.push(silver.message);
    await new Promise((resolve) => setTimeout(resolve, 200));
    silver = await judged(agreement, write('silver', 'd'), false);
  }
  const after = (Date.now() - landed) / 1000;
  t.equal(silver, undefined, `silver becomes the default ${after.toFixed(1)} s after gold's claim landed`);
  t.ok(after < 3, 'within a few seconds, not the claim window');
  t.ok(
    answers.every((m) => /gold was claimed for driver: d \d+ s ago and has not appeared yet/.test(m)),
    `until then each denial says the claim has not appeared, never that gold was admitted: ${answers[0] ?? '(none)'}`,
  );
  t.same(store.claims(), ['d=silver']);
  t.ok(
    log.lines.some((l) => (l as { msg?: string }).msg?.startsWith('default-class claim withdrawn')),
    'the withdrawal is logged',
  );
});

t.test('a claim whose class the cache has seen: "was just admitted"', async (t) => {
  const store = new MemoryLeases();
  const { agreement, index } = replica(store);
  t.equal(await judged(agreement, write('gold', 'd'), false), undefined);
  index.replaceAll(KIND, [
    { ...write('gold', 'd').object, metadata: { ...write('gold', 'd').object.metadata, resourceVersion: '' } },
  ]);
  store.clock += 2_000;
  t.equal(
    (await judged(agreement, write('silver', 'd'), false))?.message,
    'default snapshot class: gold was just admitted for driver: d; make only one class the default ' +
      '(if gold is not created after all, retry in 13 s)',
  );
});
