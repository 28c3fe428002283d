/** Structured JSON logs, one line per record, with levels; the runtime's only way to speak. */
import { LOG_LEVELS, type LogFields, type Logger, type LogLevel } from "../api/logger.ts";

// The contract (levels, fields, Logger, the silent logger) lives in src/api/logger.ts; re-exported for the runtime.
export { LOG_LEVELS, type LogFields, type Logger, type LogLevel, silentLogger } from "../api/logger.ts";

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

// How errors read in logs, conditions and Events (a Kubernetes Status, never an HTTP dump) is shared with the backends.
export { apiStatusOf, errorMessage } from "../api/error-message.ts";
