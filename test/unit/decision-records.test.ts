import t from 'tap';
import type { ReviewOutcome } from '../../src/admission/review.js';
import { BOUNDS } from '../../src/limits/bounds.js';
import { createLogger } from '../../src/log/logger.js';
import { DecisionRecords } from '../../src/server/decision-records.js';
import { memoryLog } from '../helpers/review-deps.js';

const outcome = (uid: string): ReviewOutcome => ({ request: { uid } }) as unknown as ReviewOutcome;
const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Records with a log in memory; `fails` names the uids whose record throws. */
function records(fails: ReadonlySet<string> = new Set()) {
  const log = memoryLog();
  const recorded: string[] = [];
  const held = new DecisionRecords(
    (o, durationMs) => {
      if (fails.has(o.request.uid)) throw new Error(`cannot record ${o.request.uid}`);
      recorded.push(`${o.request.uid}:${durationMs}`);
    },
    createLogger('info', log.stream),
  );
  return { held, recorded, log };
}

t.test('answers are recorded at the end of the turn, in the order they were answered', async (t) => {
  const { held, recorded } = records();
  held.add(outcome('a'), 1);
  held.add(outcome('b'), 2);
  held.add(outcome('c'), 3);
  t.same(recorded, [], 'nothing while the turn runs');
  await endOfTurn();
  t.same(recorded, ['a:1', 'b:2', 'c:3']);
  held.add(outcome('d'), 4);
  await endOfTurn();
  t.same(recorded, ['a:1', 'b:2', 'c:3', 'd:4'], 'the next turn again');
});

t.test('at the bound, the held answers are recorded at once', async (t) => {
  const { held, recorded } = records();
  for (let i = 1; i < BOUNDS.decisionsHeld; i++) held.add(outcome(`u${i}`), i);
  t.equal(recorded.length, 0, `${BOUNDS.decisionsHeld - 1} held`);
  held.add(outcome('last'), 0);
  t.equal(recorded.length, BOUNDS.decisionsHeld, 'the one at the bound records them all');
  t.equal(recorded.at(-1), 'last:0');
  held.add(outcome('after'), 5);
  await endOfTurn();
  t.equal(recorded.length, BOUNDS.decisionsHeld + 1, 'each recorded once');
  t.equal(recorded.at(-1), 'after:5');
});

t.test('flush (at close) records what is held, and the end of the turn does not record it again', async (t) => {
  const { held, recorded } = records();
  held.add(outcome('a'), 1);
  held.flush();
  t.same(recorded, ['a:1']);
  await endOfTurn();
  t.same(recorded, ['a:1']);
});

t.test('a record that throws is logged and the others are still recorded', async (t) => {
  const { held, recorded, log } = records(new Set(['b']));
  for (const uid of ['a', 'b', 'c']) held.add(outcome(uid), 1);
  await endOfTurn();
  t.same(recorded, ['a:1', 'c:1']);
  await endOfTurn();
  t.match(log.lines, [{ level: 50, uid: 'b', msg: 'could not record a decision', err: { message: 'cannot record b' } }]);
});
