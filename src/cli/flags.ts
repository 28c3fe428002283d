/** Parsing and checking of flag values shared by the subcommands; every failure is a UsageError. */
import { DNS_LABEL, LABEL_VALUE } from "../runtime/start/engine-settings.ts";
import { UsageError } from "./usage-error.ts";

/** A whole number within bounds. */
export function parseInteger(flag: string, value: string, min: number, max: number, usage: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new UsageError(`--${flag} "${value}" must be a whole number from ${min} to ${max}`, usage);
  }
  return number;
}

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

/**
 * `--namespace`: a namespace's name, or empty for all namespaces (clusterctl passes `--namespace=""`);
 * undefined when not given or empty.
 */
export function parseNamespace(value: string | undefined, usage: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!DNS_LABEL.test(value))
    throw new UsageError(`--namespace "${value}" is not a namespace name (a DNS label); empty: all`, usage);
  return value;
}

/** `--watch-filter`: a label value; undefined when not given or empty (every object). */
export function parseWatchFilter(value: string | undefined, usage: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!LABEL_VALUE.test(value))
    throw new UsageError(
      `--watch-filter "${value}" is not a label value: at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends`,
      usage,
    );
  return value;
}

/** Parsed flags of `run` and the commands that share its flags, before they are checked. */
export type EngineFlagValues = Readonly<Record<string, string | boolean | string[] | undefined>>;

/**
 * Rewrites `--flag=true` / `--flag=false` of boolean flags to `--flag` / `--no-flag`, as Go's flag package
 * (and so the openMCP operator, which appends `--leader-elect=true`) writes them; Node's parser refuses a
 * value on a boolean. Any other value is a UsageError naming the flag.
 */
export function normalizeBooleanAssignments(
  args: readonly string[],
  options: Readonly<Record<string, { readonly type: string }>>,
  usage: string,
): string[] {
  return args.map((arg) => {
    const match = /^--([^=]+)=(.*)$/.exec(arg);
    const name = match?.[1];
    if (!match || name === undefined || options[name]?.type !== "boolean") return arg;
    const value = match[2]?.toLowerCase();
    if (value === "true") return `--${name}`;
    if (value === "false") return `--no-${name}`;
    throw new UsageError(`--${name} takes true or false, not "${match[2]}"`, usage);
  });
}

/** The environment variable that may give the engine's flag `name`: `OPENMCP_ENGINE_` and the name in upper case, `-` as `_`. */
export function flagEnvironmentName(name: string): string {
  return `OPENMCP_ENGINE_${name.toUpperCase().replaceAll("-", "_")}`;
}

/**
 * Fills in the flags the command line leaves out from the environment ({@link flagEnvironmentName}): the openMCP
 * operator runs `run` with its own flags only, but sets a ClusterProvider's `env`, so that is how such a
 * deployment configures the engine. A flag on the command line wins. A boolean takes true or false, a repeatable
 * flag a comma-separated list; anything else is a UsageError naming the variable.
 */
export function withFlagsFromEnvironment(
  table: readonly FlagSpec[],
  values: EngineFlagValues,
  env: NodeJS.ProcessEnv,
  usage: string,
): EngineFlagValues {
  const filled: Record<string, string | boolean | string[] | undefined> = { ...values };
  for (const { name, type, multiple } of table) {
    const variable = flagEnvironmentName(name);
    const text = env[variable];
    if (values[name] !== undefined || text === undefined) continue;
    if (type === "boolean") {
      const value = text.toLowerCase();
      if (value !== "true" && value !== "false") {
        throw new UsageError(`${variable} takes true or false, not "${text}"`, usage);
      }
      filled[name] = value === "true";
    } else {
      filled[name] = multiple ? text.split(",").filter((item) => item !== "") : text;
    }
  }
  return filled;
}

/** How a flag is told in a usage text: its label (`--name <value>`) and what it does, one string per line. */
export interface FlagHelp {
  readonly label: string;
  readonly lines: readonly string[];
  /** The label is on a line of its own and the description starts below it (labels too long to share one). */
  readonly labelAlone?: boolean;
}

/** One flag of a command's table: how Node's parser reads it, and how the usage text tells it. */
export interface FlagSpec {
  readonly name: string;
  readonly type: "string" | "boolean";
  readonly multiple?: true;
  /** Absent for a flag told together with another (e.g. `--renew-deadline` with `--lease-duration`). */
  readonly help?: FlagHelp;
}

/** The options `parseArgs` takes, made from a flag table. */
export function parseOptions(
  table: readonly FlagSpec[],
): Record<string, { readonly type: "string" | "boolean"; readonly multiple?: true }> {
  return Object.fromEntries(
    table.map(({ name, type, multiple }) => [name, multiple ? { type, multiple } : { type }]),
  );
}

/**
 * The usage lines of a flag table: each label indented by two, its description from column `2 + width`
 * (after two spaces where the label is wider), continuation lines under the description.
 */
export function flagUsage(table: readonly FlagSpec[], width: number): string {
  const indent = " ".repeat(2 + width);
  return table
    .flatMap(({ help }) => {
      if (!help) return [];
      const [first = "", ...rest] = help.lines;
      const head = help.labelAlone
        ? [`  ${help.label}`, `${indent}${first}`]
        : [`  ${help.label.length <= width - 2 ? help.label.padEnd(width) : `${help.label}  `}${first}`];
      return [...head, ...rest.map((line) => `${indent}${line}`)];
    })
    .join("\n");
}
