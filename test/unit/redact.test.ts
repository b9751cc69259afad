import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import { createLogger } from '../../src/log/logger.js';
import { redactForLog } from '../../src/log/redact.js';
import { logDecision } from '../../src/server/decision-log.js';
import { memoryLog, reviewDeps } from '../helpers/review-deps.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

t.test('secret-looking values are replaced and long strings cut', async (t) => {
  const value = {
    parameters: { 'csi.storage.k8s.io/snapshotter-secret-name': 'db-creds', password: 'hunter2', apiKey: 'k', size: '10' },
    blob: 'x'.repeat(500),
    list: [{ token: 't' }],
  };
  const out = redactForLog(value) as Record<string, Record<string, string>>;
  t.same(
    out.parameters,
    {
      'csi.storage.k8s.io/snapshotter-secret-name': '[redacted]',
      password: '[redacted]',
      apiKey: '[redacted]',
      size: '[redacted]',
    },
    'every parameter value is withheld, the keys stay',
  );
  t.equal(out.blob, `${'x'.repeat(200)}...(500 chars)`);
  t.same(out.list, [{ token: '[redacted]' }]);
  const deep = JSON.parse('{"a":'.repeat(40) + '1' + '}'.repeat(40)) as unknown;
  t.match(JSON.stringify(redactForLog(deep)), '"[too deep]"', 'deep structures stop');
  t.same(redactForLog(JSON.parse('{"__proto__":{"x":1}}')), JSON.parse('{"__proto__":{"x":1}}'), '__proto__ stays an own key');
});

t.test('debug logs the request and response; info logs no object body', async (t) => {
  const review = readJson<{ review: unknown }>(
    `${FIXTURES}admission/volumesnapshotclasses/v1/create-parameters-proto-key.json`,
  ).review;
  const outcome = await reviewAdmission(review, reviewDeps());
  const info = memoryLog();
  logDecision(createLogger('info', info.stream), outcome, 0.5);
  t.equal(info.lines.length, 1);
  t.notOk(JSON.stringify(info.lines).includes('deletionPolicy'));
  const debug = memoryLog();
  logDecision(createLogger('debug', debug.stream), outcome, 0.5);
  t.equal(debug.lines.length, 2);
  t.match(debug.lines[1], {
    msg: 'request and response',
    request: { object: { deletionPolicy: 'Delete' } },
    response: { allowed: true },
  });
});

interface SecretCase {
  name: string;
  review: unknown;
  secrets: string[];
  denied?: string;
}

for (const c of readJson<{ cases: SecretCase[] }>(`${FIXTURES}redact/secrets.json`).cases) {
  t.test(`no secret in any log line: ${c.name}`, async (t) => {
    const outcome = await reviewAdmission(c.review, reviewDeps());
    for (const level of ['info', 'debug'] as const) {
      const log = memoryLog();
      logDecision(createLogger(level, log.stream), outcome, 0.5);
      t.equal(log.lines.length, level === 'debug' ? 2 : 1, `${level}: the lines are written`);
      const text = JSON.stringify(log.lines);
      for (const secret of c.secrets) t.notOk(text.includes(secret), `${level}: ${secret.slice(0, 20)} is not logged`);
    }
    if (c.denied !== undefined) {
      t.equal(outcome.decision.allowed, false);
      const log = memoryLog();
      logDecision(createLogger('info', log.stream), outcome, 0.5);
      t.equal(log.lines[0]?.reason, c.denied, 'the log says what was denied, without the values');
      t.match(outcome.decision.denial?.message, c.secrets[0] as string, 'the user still sees the values they wrote');
    }
  });
}
