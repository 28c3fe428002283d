/** Parsing and checking of flag values shared by the subcommands; every failure is a UsageError. */
import { UsageError } from "./usage-error.ts";

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;
const unitMs: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `500ms`, `3s`, `2m`, `1h` or plain milliseconds → milliseconds. */
export function parseDuration(flag: string, value: string, usage: string): number {
  const match = durationPattern.exec(value.trim());
  if (!match) throw new UsageError(`--${flag} "${value}" is not a duration like 500ms, 3s or 2m`, usage);
  return Math.round(Number(match[1]) * (unitMs[match[2] ?? "ms"] ?? 1));
}

/** A whole number within bounds. */
export function parseInteger(flag: string, value: string, min: number, max: number, usage: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new UsageError(`--${flag} "${value}" must be a whole number from ${min} to ${max}`, usage);
  }
  return number;
}

/** A number within bounds. */
export function parseFraction(flag: string, value: string, usage: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || number > 1) {
    throw new UsageError(`--${flag} "${value}" must be a number from 0 to 1`, usage);
  }
  return number;
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A DNS label (lowercase letters, digits, '-'; at most 63): it becomes part of names and label values. */
export function parseDnsLabel(flag: string, value: string | undefined, usage: string): string {
  if (value === undefined || value === "") throw new UsageError(`--${flag} is required`, usage);
  if (!dnsLabel.test(value)) {
    throw new UsageError(
      `--${flag} "${value}" must be a DNS label: lowercase letters, digits and '-', at most 63 characters`,
      usage,
    );
  }
  return value;
}
