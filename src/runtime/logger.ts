/** Structured JSON logs, one line per record, with levels; the runtime's only way to speak. */

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

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Where lines go; default stderr. */
  readonly write?: (line: string) => void;
  /** Clock for the `ts` field; default Date.now. */
  readonly now?: () => number;
}

/** A logger writing `{"ts":…,"level":…,"msg":…,…fields}` lines. */
export function createLogger(options: LoggerOptions = {}, base: LogFields = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level ?? "info");
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = options.now ?? Date.now;
  const log =
    (level: LogLevel) =>
    (message: string, fields: LogFields = {}) => {
      if (LOG_LEVELS.indexOf(level) < threshold) return;
      write(JSON.stringify({ ts: new Date(now()).toISOString(), level, msg: message, ...base, ...fields }));
    };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    with: (fields) => createLogger(options, { ...base, ...fields }),
  };
}

/** A logger that drops everything. */
export const silentLogger: Logger = createLogger({ write: () => {} });

/** The message of an error, for a log field. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
