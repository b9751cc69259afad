import { Writable } from 'node:stream';
import { reserveAdmittedDefaults } from '../../src/admission/review.js';
import type { ReviewSettings } from '../../src/rules/decide-request.js';
import { classSet } from './fixtures.js';

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

/** What the rules are run with: a fixture class set, options as shipped, enforce mode, admitted defaults counted. */
export function reviewDeps(classes = 'cluster', overrides: Partial<ReviewSettings> = {}): ReviewSettings {
  const index = classSet(classes);
  return {
    classes: index,
    options: { preventVolumeModeConversion: true },
    modes: { mode: 'enforce', warnRules: new Set() },
    admitted: reserveAdmittedDefaults(index),
    ...overrides,
  };
}
