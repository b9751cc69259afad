import { UsageError } from '../config/flags.js';
import type { ServeOptions } from '../config/serve-options.js';
import { createLogger, flushLogs } from '../log/logger.js';
import { startServer } from './serve.js';

/**
 * After the shutdown delay: requests in flight (< 5 s, the webhook timeout), pending denial events (bounded by
 * their own 3 s timeout) and the rest. With the Deployment's 5 s delay, 15 s in all: inside its 20 s grace.
 */
export const SHUTDOWN_WORK_MS = 10_000;

/** `snapshot-webhook serve`: start, then shut down gracefully on SIGTERM or SIGINT and exit 0. */
export async function runServer(options: ServeOptions): Promise<number> {
  const logger = createLogger(options.logLevel);
  let server;
  try {
    server = await startServer(options, logger);
  } catch (error) {
    // A command line that cannot serve is the user's to fix: main.ts prints its one line and exits 2.
    if (error instanceof UsageError) throw error;
    logger.fatal({ err: error }, `cannot start: ${(error as Error).message}`);
    flushLogs(logger);
    return 1;
  }
  const running = server;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      // A second signal (kubelet's SIGTERM after a Ctrl-C, a restart script) must not cut the drain short.
      if (stopping) {
        logger.info({ signal }, 'already shutting down; the drain goes on');
        return;
      }
      stopping = true;
      // Whatever hangs (a call to a frozen apiserver), exit before the kubelet's SIGKILL, with the logs flushed.
      const deadlineMs = options.shutdownDelayMs + SHUTDOWN_WORK_MS;
      const deadline = setTimeout(() => {
        logger.warn({ seconds: deadlineMs / 1000 }, 'shutdown did not finish in time; exiting with work still open');
        flushLogs(logger);
        // A hung socket would keep the process alive past the grace period: exit now.
        process.exit(1);
      }, deadlineMs);
      deadline.unref();
      running.shutdown(signal).then(
        () => {
          clearTimeout(deadline);
          flushLogs(logger);
          resolve(0);
        },
        (error: unknown) => {
          clearTimeout(deadline);
          logger.error({ err: error }, 'error while shutting down');
          flushLogs(logger);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
