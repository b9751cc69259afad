import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/serve-options.js';

export type { Logger };

/**
 * JSON lines on stdout. `base` drops pid and hostname: the pod already labels every line with both.
 */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: null, timestamp: pino.stdTimeFunctions.isoTime };
  return destination === undefined ? pino(options) : pino(options, destination);
}
