// The two listeners as their parts (src/server/app.ts): each part is a named fastify plugin whose declared
// dependencies come before it; fastify closes the parts in the reverse order, and both listeners answer errors and
// unknown paths with the same coded body.
import type { FastifyInstance } from 'fastify';
import t from 'tap';
import type { ClassSource } from '../../src/classes/class-source.js';
import type { DenialEvents } from '../../src/cluster/denial-events.js';
import type { DefaultAgreement } from '../../src/rules/default-claim.js';
import { admissionParts, buildApp, buildProbeApp, probeParts, type AppOptions } from '../../src/server/app.js';
import type { ServingCertificate } from '../../src/server/serving-certificate.js';
import { createLogger } from '../../src/log/logger.js';
import { memoryLog, reviewDeps } from '../helpers/app.js';

const logger = createLogger('info', memoryLog().stream);
const readiness = { checks: () => [{ name: 'test', problems: [] }] };

/** The admission listener with every long-lived part, each noting in `closed` when it is stopped. */
function withParts(closed: string[]): AppOptions {
  const note = (name: string) => async () => void closed.push(name);
  return {
    review: reviewDeps(),
    logger,
    readiness,
    parts: {
      certificate: { start: () => undefined, stop: note('certificate-reload') } as unknown as ServingCertificate,
      classes: { start: async () => undefined, stop: note('class-source') } as unknown as ClassSource,
      agreement: { drain: note('default-agreement') } as unknown as DefaultAgreement,
      events: { drain: note('denial-events') } as unknown as DenialEvents,
      probes: {
        app: { close: note('probe-port'), listen: async () => '' } as unknown as FastifyInstance,
        port: 0,
        host: '127.0.0.1',
      },
    },
  };
}

for (const [listener, parts] of [
  ['admission', admissionParts(withParts([]))],
  ['probe', probeParts(readiness, undefined, logger)],
] as const)
  t.test(`the ${listener} listener: each part's dependencies are parts before it`, async (t) => {
    const names = parts.map((p) => p.name);
    t.equal(new Set(names).size, names.length, `each part once: ${names.join(', ')}`);
    for (const [i, p] of parts.entries())
      t.same(
        p.dependencies.filter((d) => !names.slice(0, i).includes(d)),
        [],
        `${p.name} comes after ${p.dependencies.join(', ') || 'nothing it needs'}`,
      );
  });

t.test('fastify closes the parts in the reverse order of the list', async (t) => {
  const closed: string[] = [];
  const options = withParts(closed);
  const app = buildApp(options);
  await app.ready();
  await app.close();
  const order = admissionParts(options)
    .map((p) => p.name)
    .reverse()
    .filter((name) => closed.includes(name));
  t.same(closed, order, 'the long-lived parts, each stopped once, in that order');
  t.same(closed, ['probe-port', 'denial-events', 'default-agreement', 'class-source', 'certificate-reload']);
});

t.test('both listeners answer an unknown path with the coded 404, naming their own paths', async (t) => {
  for (const [app, paths] of [
    [
      buildApp({ review: reviewDeps(), logger, readiness }),
      'admission paths are POST /validate, /volumesnapshot, /volumegroupsnapshot',
    ],
    [buildProbeApp(readiness, undefined, logger), 'probe paths are GET /healthz, /readyz, /metrics'],
  ] as const) {
    const answer = await app.inject({ method: 'GET', url: '/nowhere' });
    t.equal(answer.statusCode, 404);
    t.same(answer.json(), {
      statusCode: 404,
      code: 'SW_NOT_FOUND',
      error: 'Not Found',
      message: `no route GET /nowhere; ${paths}`,
    });
    await app.close();
  }
});
