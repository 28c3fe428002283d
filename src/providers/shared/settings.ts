/** Reading what a person wrote for a backend: ProviderConfig `spec.settings` and `--backend-option`s. Pure. */
import type { JsonObject } from "../../api/common.ts";
import { parseDuration } from "../../api/duration.ts";

/** Throws a settings problem: `ProviderConfig <name>: <what>; write <example>`. */
export type SettingsFailure = (what: string) => never;

/** The {@link SettingsFailure} of one ProviderConfig, ending every message with what to write (`example`). */
export function settingsFailure(providerConfig: string, example: string): SettingsFailure {
  return (what) => {
    throw new Error(`ProviderConfig ${providerConfig}: ${what}; write ${example}`);
  };
}

/** Whether `value` is a JSON object (not null, not a list). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` as a map of names to strings (absent: empty); `where` names the field in the failure. */
export function stringMap(value: unknown, where: string, fail: SettingsFailure): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value) || Object.values(value).some((v) => typeof v !== "string"))
    return fail(`${where} must map names to strings`);
  return value as Record<string, string>;
}

/**
 * The `--backend-option` `name` as milliseconds, undefined when it is not given. Throws
 * `<backend> backend: <name> "<value>" is not a duration like <examples>` when it is not a duration, or (with
 * `positive`) is zero or less.
 */
export function durationOption(
  options: Readonly<Record<string, string>>,
  name: string,
  { backend, examples, positive = false }: { backend: string; examples: string; positive?: boolean },
): number | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined || (positive && ms <= 0))
    throw new Error(`${backend} backend: ${name} "${value}" is not a duration like ${examples}`);
  return ms;
}
