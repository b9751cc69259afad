import type { ServeOptions } from '../config/serve-options.js';
import { createLogger, flushLogs } from '../log/logger.js';
import { startServer } from './serve.js';

/** `snapshot-webhook serve`: start, then shut down gracefully on SIGTERM or SIGINT and exit 0. */
export async function runServer(options: ServeOptions): Promise<number> {
  const logger = createLogger(options.logLevel);
  let server;
  try {
    server = await startServer(options, logger);
  } catch (error) {
    logger.fatal({ err: error }, `cannot start: ${(error as Error).message}`);
    flushLogs(logger);
    return 1;
  }
  const running = server;
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      running.shutdown(signal).then(
        () => {
          flushLogs(logger);
          resolve(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'error while shutting down');
          flushLogs(logger);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
