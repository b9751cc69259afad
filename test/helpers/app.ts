import { buildApp, type Readiness } from '../../src/server/app.js';
import { createLogger } from '../../src/log/logger.js';
import type { ReviewSettings } from '../../src/rules/decide-request.js';
import { memoryLog, reviewDeps } from './review-deps.js';

export { memoryLog, reviewDeps };

/** The server's routes in process (fastify inject), with the fixture classes and a log kept in memory. */
export function testApp(options: { readiness?: Readiness; deps?: ReviewSettings; closing?: () => boolean } = {}) {
  const log = memoryLog();
  const app = buildApp({
    review: options.deps ?? reviewDeps(),
    logger: createLogger('info', log.stream),
    readiness: options.readiness ?? { checks: () => [{ name: 'test', problems: [] }] },
    ...(options.closing === undefined ? {} : { closing: options.closing }),
  });
  return { app, log };
}
