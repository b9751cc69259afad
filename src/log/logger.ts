import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/serve-options.js';

export type { Logger };

/**
 * JSON lines on stdout. `base` drops pid and hostname: the pod already labels every line with both. The time
 * is pino's epoch milliseconds (an ISO string costs 5 µs a line, measured). Writes are pino's default,
 * synchronous: an asynchronous destination measured slower under load (a callback per line).
 */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: null };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/** Writes out what the asynchronous destination still holds (at shutdown). */
export function flushLogs(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Nothing to flush, or stdout is gone: there is no one left to tell.
  }
}
