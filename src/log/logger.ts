import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './levels.js';

export type { Logger };

/**
 * What pino's asynchronous stdout destination (sonic-boom) may hold: lines are gathered into writes of at
 * least 4 KiB and written at least every 250 ms; when stdout is not read, at most 4 MiB waits, and lines past
 * that are dropped and counted (a stalled log reader must not take the pod's memory).
 *
 * One write is in flight at a time, and it completes at the event loop's next turn; sonic-boom's default
 * write of at most 16 KiB then drained less than a saturated server logs per turn. Measured at 100
 * connections: the held text grew by about 0.5 MB/s, reached the 4 MiB bound after about 10 s, and from then
 * on decision lines were dropped; the held lines also lived long enough to be promoted, 270 bytes per request
 * into the old generation. A write of up to 256 KiB takes a turn's lines at once: the held text stayed near
 * 50 KB and 30 bytes per request were promoted (docs/benchmarks.md).
 */
const MIN_WRITE = 4096;
const MAX_WRITE = 256 * 1024;
const MAX_HELD = 4 * 1024 * 1024;
const FLUSH_EVERY_MS = 250;

let droppedLines = 0;

/** Log lines dropped because stdout was not read fast enough (a metric). */
export function logLinesDropped(): number {
  return droppedLines;
}

function stdoutDestination(): DestinationStream {
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: MIN_WRITE,
    maxWrite: MAX_WRITE,
    maxLength: MAX_HELD,
    periodicFlush: FLUSH_EVERY_MS,
  });
  destination.on('drop', (data: string) => {
    droppedLines += data.split('\n').length - 1;
  });
  return destination;
}

/**
 * JSON lines on stdout. `base` drops pid and hostname: the pod already labels every line with both. pino
 * flushes its destination synchronously when the process exits.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino({ level, base: null }, destination ?? stdoutDestination());
}

/** Writes out what the destination still holds (at shutdown). */
export function flushLogs(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Nothing to flush, or stdout is gone: there is no one left to tell.
  }
}
