import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { reviewAdmission, type ReviewOutcome } from '../src/admission/review.js';
import { formatDecisionLine, logDecision } from '../src/log/decision-line.js';
import { createLogger } from '../src/log/logger.js';
import { memoryLog } from './helpers/app.js';
import { AWKWARD_STRINGS, classSet, FIXTURES, filesUnder, fixtureName, readJson } from './helpers/fixtures.js';

const TIME = 1_790_000_000_123;

/** What pino itself writes for the decision fields: the line formatDecisionLine must equal byte for byte. */
function pinoLine(outcome: ReviewOutcome, durationMs: number, bindings?: Record<string, unknown>): string {
  let text = '';
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const root = pino({ level: 'info', base: null, timestamp: () => `,"time":${TIME}` }, capture);
  const logger = bindings === undefined ? root : root.child(bindings);
  const { request, decision, evaluation } = outcome;
  logger.info(
    {
      uid: request.uid,
      kind: evaluation.route?.kind ?? request.kind.kind,
      resource: `${request.resource.resource}.${request.resource.version}.${request.resource.group}`,
      namespace: request.namespace,
      name: request.name,
      operation: request.operation,
      user: request.userInfo?.username,
      dryRun: request.dryRun === true ? true : undefined,
      allowed: decision.allowed,
      rule: decision.denial?.rule,
      reason: decision.denial?.message,
      warnings: decision.warnings.length > 0 ? decision.warnings.length : undefined,
      ms: Math.round(durationMs * 1000) / 1000,
    },
    decision.allowed ? (decision.softened ? 'allowed (would be denied)' : 'allowed') : 'denied',
  );
  return text;
}

interface AdmissionFixture {
  classes: string;
  review: { request: Record<string, unknown> };
}

function outcomeOf(file: string, edit?: (request: Record<string, unknown>) => void, mode: 'enforce' | 'warn' = 'enforce') {
  const fixture = readJson<AdmissionFixture>(file);
  edit?.(fixture.review.request);
  return reviewAdmission(fixture.review, {
    classes: classSet(fixture.classes),
    options: { preventVolumeModeConversion: true },
    modes: { mode, warnRules: new Set() },
  });
}

const files = filesUnder(`${FIXTURES}admission`);

t.test('the decision line is the line pino writes, on every admission fixture', async (t) => {
  for (const file of files) {
    const outcome = outcomeOf(file);
    t.equal(formatDecisionLine(outcome, 0.4567, TIME), pinoLine(outcome, 0.4567), fixtureName(file));
  }
});

const denied = files.find((f) => f.endsWith('volumesnapshots/v1/create-both-sources.json'));
const allowed = files.find((f) => f.endsWith('volumesnapshots/v1/create-pvc-source.json'));

t.test('strings that need escaping, every optional field, warn mode and a child logger', async (t) => {
  t.ok(denied !== undefined && allowed !== undefined, 'the fixtures this test edits exist');
  for (const text of AWKWARD_STRINGS) {
    const outcome = outcomeOf(denied!, (request) => {
      request.name = text;
      request.namespace = text;
      request.userInfo = { username: text };
      request.dryRun = true;
    });
    t.equal(formatDecisionLine(outcome, 2, TIME), pinoLine(outcome, 2), JSON.stringify(text));
    t.equal((JSON.parse(formatDecisionLine(outcome, 2, TIME)) as { name: string }).name, text, 'the name survives');
  }
  const softened = outcomeOf(denied!, undefined, 'warn');
  t.equal(softened.decision.softened, true);
  t.equal(formatDecisionLine(softened, 1, TIME), pinoLine(softened, 1), 'warn mode: allowed (would be denied)');
  const plain = outcomeOf(allowed!);
  t.equal(formatDecisionLine(plain, 1, TIME, ',"replica":"a"'), pinoLine(plain, 1, { replica: 'a' }), 'child bindings');
});

t.test('a lone surrogate is escaped, so the line stays valid JSON (pino writes it raw)', async (t) => {
  const outcome = outcomeOf(denied!, (request) => {
    request.name = 'half-\ud83d';
  });
  const line = formatDecisionLine(outcome, 1, TIME);
  t.ok(line.includes('"name":"half-\\ud83d"'));
  t.equal((JSON.parse(line) as { name: string }).name, 'half-\ud83d');
});

t.test('logDecision writes the line to the logger destination with a child logger bindings, nothing below info', async (t) => {
  const outcome = outcomeOf(denied!);
  const log = memoryLog();
  const logger = createLogger('info', log.stream);
  logger.info('before');
  logDecision(logger.child({ replica: 'b' }), outcome, 0.25);
  logger.info('after');
  t.same(
    log.lines.map((l) => l.msg),
    ['before', 'denied', 'after'],
    'in order with the other lines',
  );
  t.match(log.lines[1], { level: 30, replica: 'b', allowed: false, rule: String, reason: String, ms: 0.25 });
  t.ok(Math.abs((log.lines[1]!.time as number) - Date.now()) < 60_000, 'epoch milliseconds, as pino');
  const quiet = memoryLog();
  logDecision(createLogger('warn', quiet.stream), outcome, 0.25);
  t.equal(quiet.lines.length, 0);
});
