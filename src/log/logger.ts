import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './levels.js';

export type { Logger };

/**
 * What pino's asynchronous stdout destination (sonic-boom) may hold: lines are gathered into writes of at
 * least 4 KiB and written at least every 250 ms; when stdout is not read, at most 4 MiB waits, and lines past
 * that are dropped and counted (a stalled log reader must not take the pod's memory).
 *
 * One write is in flight at a time, and it completes at the event loop's next turn; sonic-boom's default
 * write of at most 16 KiB drains less than a saturated server logs per turn, so lines pile up to the bound and
 * are dropped. A write of up to 256 KiB takes a turn's lines at once (docs/benchmarks.md, "What the measurements
 * chose").
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

/** sonic-boom in its buffer mode, whose write takes bytes; its types know only the text mode's strings. */
type ByteDestination = Omit<ReturnType<typeof pino.destination>, 'write'> & { write(bytes: Uint8Array): boolean };

/** What pino calls on a destination: write a line, and flush at shutdown (`flush`) or on a fatal line. */
type LineDestination = DestinationStream & { flush(done?: (error?: Error) => void): void; flushSync(): void };

/**
 * sonic-boom's buffer mode (`contentMode: 'buffer'`), each line given to it as bytes. In its text mode,
 * sonic-boom measures the text gathered for its next write with `Buffer.byteLength` before it appends each
 * line, and V8 first copies that joined text into one string: every line logged while a write is in flight
 * copies all the lines before it, so the cost grows with how far the server is behind. In buffer mode it keeps
 * each line's byte count and joins the lines once per write (docs/benchmarks.md, "What the measurements chose").
 */
function stdoutDestination(): LineDestination {
  const destination = pino.destination({
    dest: 1,
    sync: false,
    contentMode: 'buffer',
    minLength: MIN_WRITE,
    maxWrite: MAX_WRITE,
    maxLength: MAX_HELD,
    periodicFlush: FLUSH_EVERY_MS,
  }) as unknown as ByteDestination;
  // pino writes one line at a time, so one dropped write is one dropped line.
  destination.on('drop', () => {
    droppedLines += 1;
  });
  return {
    // Looked up at each line: on EPIPE pino replaces the destination's write with one that does nothing.
    write: (line: string) => destination.write(Buffer.from(line)),
    flush: (done) => destination.flush(done),
    flushSync: () => destination.flushSync(),
  };
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
