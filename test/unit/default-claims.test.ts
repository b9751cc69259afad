import t from 'tap';
import { BOUNDS } from '../../src/limits/bounds.js';
import {
  CLAIM_WINDOW_MS,
  decideClaim,
  driverKey,
  readClaims,
  writeClaims,
  type CacheView,
  type Claim,
  type ObservedClass,
} from '../../src/classes/default-claims.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

interface Case {
  name: string;
  book: Record<string, Omit<Claim, 'driver'>>;
  wanted: { driver: string; class: string; uid: string; resourceVersion: string };
  now: number;
  observed: Record<string, ObservedClass>;
  /** uids the cache saw deleted within the window. */
  deleted?: string[];
  expect: { outcome: 'take'; classes: string[] } | { outcome: 'held'; by: string } | { outcome: 'full' };
}

/** A synced cache that holds no classes and saw none deleted. */
const EMPTY_CACHE: CacheView = { observed: () => undefined, deleted: () => false };

const { cases } = readJson<{ cases: Case[] }>(`${FIXTURES}claims/decide-claim.json`);

t.equal(CLAIM_WINDOW_MS, 15_000, 'the fixtures are written for a 15 s window');

for (const c of cases) {
  t.test(c.name, async (t) => {
    const book = new Map(Object.entries(c.book).map(([driver, claim]) => [driverKey(driver), { driver, ...claim }]));
    const answer = decideClaim(book, { kind: 'VolumeSnapshotClass', ...c.wanted }, c.now, {
      observed: (name) => c.observed[name],
      deleted: (uid) => c.deleted?.includes(uid) === true,
    });
    t.equal(answer.outcome, c.expect.outcome);
    if (answer.outcome === 'held' && c.expect.outcome === 'held') t.equal(answer.by.class, c.expect.by);
    if (answer.outcome === 'take' && c.expect.outcome === 'take') {
      t.same([...answer.book.values()].map((claim) => claim.class).sort(), c.expect.classes);
      t.same(answer.book.get(driverKey(c.wanted.driver)), { ...c.wanted, at: c.now }, 'the new claim, at the given time');
    }
  });
}

t.test('live claims are bounded: one more driver is refused, a held driver can still be retaken', async (t) => {
  const now = 1_000_000;
  const book = new Map<string, Claim>();
  for (let i = 0; i < BOUNDS.liveClaims; i++) {
    book.set(driverKey(`d${i}`), { driver: `d${i}`, class: `c${i}`, uid: '', resourceVersion: '', at: now - 1000 });
  }
  const wanted = { kind: 'VolumeSnapshotClass' as const, driver: 'new', class: 'n', uid: 'u', resourceVersion: '' };
  t.same(decideClaim(book, wanted, now, EMPTY_CACHE), { outcome: 'full' });
  t.equal(decideClaim(book, { ...wanted, driver: 'd0', class: 'c0' }, now, EMPTY_CACHE).outcome, 'take');
  t.equal(decideClaim(book, wanted, now + CLAIM_WINDOW_MS, EMPTY_CACHE).outcome, 'take', 'room again once they age');
});

t.test('a driver name of any length costs the same in the book', async (t) => {
  const long = 'x'.repeat(1_000_000);
  const answer = decideClaim(
    new Map(),
    { kind: 'VolumeSnapshotClass', driver: long, class: 'a', uid: 'u', resourceVersion: '' },
    5,
    EMPTY_CACHE,
  );
  t.equal(answer.outcome, 'take');
  if (answer.outcome === 'take') t.ok(writeClaims(answer.book).length < 300, 'the written record stays small');
  t.equal(driverKey(long).length, 32);
});

t.test('the annotation round-trips; what cannot be read is ignored, never thrown', async (t) => {
  const claim: Claim = { driver: 'd1', class: 'a', uid: 'u', resourceVersion: '3', at: 42 };
  const book = new Map([[driverKey('d1'), claim]]);
  t.same(readClaims(writeClaims(book)), book);
  for (const bad of [undefined, '', 'not json', 'null', '[1]', '{"k":{"class":1}}', '{"k":null}']) {
    t.same(readClaims(bad), new Map(), JSON.stringify(bad));
  }
});
