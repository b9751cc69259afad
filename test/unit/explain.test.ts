// explain's causes (src/explain/snapshot-causes.ts), table-driven over test/fixtures/explain/snapshots.yaml: each
// case's objects -> its cause and its one line; every cause has a case, and docs/cli.md shows each cause's example
// line as its `doc: true` case says it.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { explain, formatExplanation, snapshotName } from '../../src/cli/explain-command.js';
import { explainSnapshot, SNAPSHOT_CAUSES, type Found, type Obj, type SnapshotWorld } from '../../src/explain/snapshot-causes.js';
import { FIXTURES } from '../helpers/fixtures.js';

interface Case {
  readonly name: string;
  readonly doc?: boolean;
  readonly snapshot: Obj;
  readonly classes: readonly Obj[] | { unknown: string };
  readonly claim?: Obj | 'missing';
  readonly volume?: Obj | 'missing';
  readonly content: Obj | 'missing';
  readonly secret?: Obj | 'missing';
  readonly events?: SnapshotWorld['events'];
  readonly contentEvents?: SnapshotWorld['events'];
  readonly ageSeconds?: number;
  readonly cause: string;
  readonly message: string;
}

const { cases } = parse(readFileSync(`${FIXTURES}explain/snapshots.yaml`, 'utf8'), { merge: true }) as { cases: Case[] };

function found<T>(value: T | 'missing' | { unknown: string }): Found<T> {
  if (value === 'missing') return { missing: true };
  if (typeof value === 'object' && value !== null && 'unknown' in value) return value;
  return { found: value as T };
}

function world(c: Case): SnapshotWorld {
  return {
    snapshot: c.snapshot,
    events: c.events ?? [],
    classes: found(c.classes),
    ...(c.claim === undefined ? {} : { claim: found(c.claim) }),
    ...(c.volume === undefined ? {} : { volume: found(c.volume) }),
    content: found(c.content),
    contentEvents: c.contentEvents ?? [],
    ...(c.secret === undefined ? {} : { secret: found(c.secret) }),
    ageSeconds: c.ageSeconds ?? 0,
  };
}

for (const c of cases)
  t.test(c.name, async (t) => {
    const e = explainSnapshot(world(c));
    t.equal(e.cause, c.cause, 'the cause');
    t.equal(e.message, c.message, 'the one line');
    t.equal(e.ready, c.cause === 'ready');
    t.equal(e.chain[0]?.step, 'snapshot', 'the chain starts at the snapshot');
  });

t.test('every cause has a case, and one the docs show', async (t) => {
  t.same([...new Set(cases.map((c) => c.cause))].sort(), [...SNAPSHOT_CAUSES].sort());
  t.same([...new Set(cases.filter((c) => c.doc === true).map((c) => c.cause))].sort(), [...SNAPSHOT_CAUSES].sort());
});

t.test("docs/cli.md's table of causes says each cause's example line as explain does", async (t) => {
  const doc = readFileSync('docs/cli.md', 'utf8');
  const rows = new Map(
    [...doc.matchAll(/^\| `([a-z-]+)` +\| (.+?) +\|$/gm)]
      .filter((m) => (SNAPSHOT_CAUSES as readonly string[]).includes(m[1] ?? ''))
      .map((m) => [m[1], m[2]?.replaceAll('\\|', '|')]),
  );
  for (const c of cases.filter((x) => x.doc === true)) t.equal(rows.get(c.cause), c.message, c.cause);
});

t.test('KIND/NAME: a VolumeSnapshot by any of its names; anything else is a usage error', async (t) => {
  t.equal(snapshotName('volumesnapshot/a'), 'a');
  t.equal(snapshotName('VolumeSnapshot/a'), 'a');
  t.equal(snapshotName('vs/a'), 'a');
  t.throws(() => snapshotName('a'), /explain takes one KIND\/NAME/);
  t.throws(() => snapshotName('pvc/a'), /explain reads VolumeSnapshots \(volumesnapshot\/NAME\), not "pvc"/);
});

t.test('exit codes and output: 0 ready, 1 not ready, 3 unreadable; text and json', async (t) => {
  const ready = cases.find((c) => c.cause === 'ready') as Case;
  const stuck = cases.find((c) => c.cause === 'no-default-class') as Case;
  let out = '';
  const write = (text: string) => void (out += text);
  t.equal(await explain(async () => ({ found: world(ready) }), 'VolumeSnapshot apps/data-snap', 'text', write), 0);
  t.match(out, /^Ready: ready to use/);
  out = '';
  t.equal(await explain(async () => ({ found: world(stuck) }), 'VolumeSnapshot apps/data-snap', 'json', write), 1);
  t.equal((JSON.parse(out) as { cause: string }).cause, 'no-default-class');
  out = '';
  t.equal(await explain(async () => ({ missing: true }), 'VolumeSnapshot apps/gone', 'text', write), 3);
  t.equal(out, 'VolumeSnapshot apps/gone does not exist\n');
  t.match(
    formatExplanation(explainSnapshot(world(stuck))),
    /^Not ready: no class named.*\n  snapshot {6}VolumeSnapshot apps\/data-snap/,
  );
});

t.test("docs/cli.md's example prints as explain prints that case", async (t) => {
  const doc = readFileSync('docs/cli.md', 'utf8');
  const section = doc.slice(doc.indexOf('## `snapshot-webhook explain'));
  // The first untagged block: the output.
  const example = /^```\n(Not ready[\s\S]*?)^```/m.exec(section)?.[1];
  const twoDefaults = cases.find((c) => c.cause === 'two-default-classes') as Case;
  t.equal(example, formatExplanation(explainSnapshot(world(twoDefaults))));
});
