/** The logging contract: levels, fields and the Logger interface the runtime and the backends write through. */

/** Log levels, least to most severe. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Fields attached to a record; values must be JSON-serializable and never secrets. */
export type LogFields = Readonly<Record<string, unknown>>;

/** A logger; `with` returns one that adds fields to every record. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  with(fields: LogFields): Logger;
}

const ignore = (): void => {};

/** A logger that drops everything; `with` returns the same logger. */
export const silentLogger: Logger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  with: () => silentLogger,
};
