import t from 'tap';
import type { ReviewOutcome } from '../../src/admission/review.js';
import { createLogger } from '../../src/log/logger.js';
import { DecisionRecords } from '../../src/server/decision-records.js';
import { TurnAnswers } from '../../src/server/turn-answers.js';
import { memoryLog } from '../helpers/review-deps.js';

const outcome = (uid: string): ReviewOutcome => ({ request: { uid } }) as unknown as ReviewOutcome;
const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Decides `uids` in this turn as the admission route does: the turn's end asked first, then the record held. */
function decide(answers: TurnAnswers, records: DecisionRecords, events: string[], uids: readonly string[]) {
  return uids.map((uid) => {
    const turnEnd = answers.end();
    records.add(outcome(uid), 1);
    return turnEnd.then(() => events.push(`answered ${uid}`));
  });
}

t.test("a turn's answers are released together at its end, before its decisions are recorded", async (t) => {
  const events: string[] = [];
  const answers = new TurnAnswers();
  const records = new DecisionRecords((o) => events.push(`recorded ${o.request.uid}`), createLogger('info', memoryLog().stream));
  const released = decide(answers, records, events, ['a', 'b', 'c']);
  await Promise.resolve();
  t.same(events, [], 'nothing while the turn runs');
  await Promise.all(released);
  t.same(events, ['answered a', 'answered b', 'answered c'], 'all three at the end of the turn');
  await endOfTurn();
  t.same(events.slice(3), ['recorded a', 'recorded b', 'recorded c'], 'then the records, in the order decided');
});

t.test('each turn has its own end', async (t) => {
  const answers = new TurnAnswers();
  const first = answers.end();
  t.equal(answers.end(), first, 'the same end within a turn');
  await first;
  const second = answers.end();
  t.not(second, first, 'a new one in the next turn');
  let done = false;
  void second.then(() => (done = true));
  await Promise.resolve();
  t.notOk(done, 'not yet released');
  await second;
  t.ok(done);
});
