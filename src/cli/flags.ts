/** Parsing and checking of flag values shared by the subcommands; every failure is a UsageError. */
import { UsageError } from "./usage-error.ts";

/** A whole number within bounds. */
export function parseInteger(flag: string, value: string, min: number, max: number, usage: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new UsageError(`--${flag} "${value}" must be a whole number from ${min} to ${max}`, usage);
  }
  return number;
}

/** A DNS label: lowercase letters, digits and '-', at most 63 characters, alphanumeric at both ends. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A DNS label (lowercase letters, digits, '-'; at most 63): it becomes part of names and label values. */
export function parseDnsLabel(flag: string, value: string | undefined, usage: string): string {
  if (value === undefined || value === "") throw new UsageError(`--${flag} is required`, usage);
  if (!DNS_LABEL.test(value)) {
    throw new UsageError(
      `--${flag} "${value}" must be a DNS label: lowercase letters, digits and '-', at most 63 characters`,
      usage,
    );
  }
  return value;
}

/** Parsed flags of `run` and the commands that share its flags, before they are checked. */
export type EngineFlagValues = Readonly<Record<string, string | boolean | string[] | undefined>>;
