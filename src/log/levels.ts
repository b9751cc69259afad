/** pino's level names, for the `--log-level` flag (kept apart from the logger so flag parsing loads no pino). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
