import { Writable } from 'node:stream';
import { buildApp, type Readiness } from '../../src/server/app.js';
import { createLogger } from '../../src/log/logger.js';
import { classSet } from './fixtures.js';
import { reserveAdmittedDefaults } from '../../src/admission/review.js';
import type { ReviewSettings as ReviewDeps } from '../../src/rules/decide-request.js';

/** Collects pino's JSON lines, so tests can assert what was logged. */
export function memoryLog(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

export function reviewDeps(classes = 'cluster', overrides: Partial<ReviewDeps> = {}): ReviewDeps {
  const index = classSet(classes);
  return {
    classes: index,
    options: { preventVolumeModeConversion: true },
    modes: { mode: 'enforce', warnRules: new Set() },
    admitted: reserveAdmittedDefaults(index),
    ...overrides,
  };
}

export function testApp(options: { readiness?: Readiness; deps?: ReviewDeps; closing?: () => boolean } = {}) {
  const log = memoryLog();
  const app = buildApp({
    review: options.deps ?? reviewDeps(),
    logger: createLogger('info', log.stream),
    readiness: options.readiness ?? { notReadyReasons: () => [] },
    ...(options.closing === undefined ? {} : { closing: options.closing }),
  });
  return { app, log };
}
