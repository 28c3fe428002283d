/** `openmcp-engine plan -f <changes>`: what the engine would write and which backend commands it would issue, nothing done. */
import { readFile } from "node:fs/promises";
import { loadAllYaml } from "@kubernetes/client-node";
import type { PatchOperation } from "../machines/shared/json-patch.ts";
import { loadKubeConfig } from "../runtime/api-server/load-kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import {
  type Manifest,
  type Plan,
  type PlanChange,
  type PlannedObject,
  type PlannedRollout,
  plan,
} from "../runtime/plan/plan.ts";
import { backendFromSettings, kindSettingsFromSettings } from "../runtime/start/engine-from-settings.ts";
import { engineFlags, parseEngineArgs } from "./run.ts";
import { UsageError } from "./usage-error.ts";

/** Exit codes a pipeline gates on (as `terraform plan -detailed-exitcode`). */
export const PLAN_EXIT = { nothingChanges: 0, error: 1, changes: 2 } as const;

/** The help text of `plan`. */
export const planUsage = `Usage: openmcp-engine plan -f <file|-> [--delete <kind>/<namespace>/<name>] [-o json] [engine flags]

Shows what the engine would do if the changes were applied: per object, the patches it would write and
the backend commands it would issue, then a summary (created, updated, deleted, access affected). It reads
the live objects, applies the changes in memory and runs every affected object's own step (the same code
the engine runs) until it settles, asking the backend only to observe. Nothing is written to the API
server; no backend command is run. An object whose next step depends on what a backend answers to a
command stops there, and the plan says so.

Flags:
  -f, --filename <file|->   manifests (YAML or JSON, several documents) to create or update; - reads stdin;
                            repeatable. An existing object gets the manifest's spec and its labels and
                            annotations set (others stay)
  --delete <kind>/<ns>/<name>  an object to delete (<kind>/<name> for cluster-scoped kinds); repeatable
  -o, --output <text|json>  text for a person (default), json for a pipeline
  and every flag of 'openmcp-engine run' (--provider-name, --kubeconfig, --backend, --backend-option,
  --state-dir, --namespace, --scheduler-config, …): the plan is that of the engine run with them.

Exit codes: 0 nothing would change; 2 something would (a write, a creation, a deletion or a command);
1 an error (a bad flag or manifest, an unreachable API server).

Examples: openmcp-engine plan -f new-versions.yaml --provider-name sim --backend simulated
          kubectl get providerconfig small -o yaml | yq '.spec.defaultVersion="1.33.6"' | \\
            openmcp-engine plan -f - --provider-name sim -o json`;

const PLAN_OPTIONS = {
  filename: { type: "string", short: "f", multiple: true },
  delete: { type: "string", multiple: true },
  output: { type: "string", short: "o" },
} as const;

/** Runs `plan` with its arguments; writes the plan with `write`; sets the exit code (see {@link PLAN_EXIT}). */
export async function planCommand(
  args: string[],
  write: (text: string) => void = console.log,
  readStdin: () => Promise<string> = stdin,
): Promise<Plan> {
  const { values, flags, output } = parsePlanArgs(args);
  const files = (values.filename as string[] | undefined) ?? [];
  const deletions = (values.delete as string[] | undefined) ?? [];
  if (files.length === 0 && deletions.length === 0)
    throw usage("plan needs changes: -f <file|-> or --delete <kind>/<namespace>/<name>");
  const changes: PlanChange[] = [];
  for (const file of files) changes.push(...manifestsIn(file, await readChanges(file, readStdin)));
  changes.push(...deletions.map(deletionOf));
  const { kubeConfig } = loadKubeConfig(flags.kubeconfig);
  const log = createLogger({ level: flags.logLevel === "info" ? "warn" : flags.logLevel });
  const result = await plan(changes, {
    kubeConfig,
    providerName: flags.providerName,
    environment: flags.environment,
    backend: await backendFromSettings(flags, kubeConfig, log),
    kindSettings: await kindSettingsFromSettings(flags, kubeConfig, log),
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(flags.watchFilter ? { watchFilter: flags.watchFilter } : {}),
    log,
  });
  write(output === "json" ? JSON.stringify(result, null, 2) : formatPlan(result));
  process.exitCode = result.changes ? PLAN_EXIT.changes : PLAN_EXIT.nothingChanges;
  return result;
}

/** A usage error of `plan`: exit code 1, as every error of plan (2 says "changes"). */
function usage(message: string): UsageError {
  return new UsageError(message, planUsage, PLAN_EXIT.error);
}

function parsePlanArgs(args: string[]) {
  try {
    const values = parseEngineArgs(args, planUsage, PLAN_OPTIONS);
    const output = (values.output as string | undefined) ?? "text";
    if (output !== "text" && output !== "json") throw usage(`-o ${output}: give text or json`);
    return { values, flags: engineFlags(values, planUsage), output };
  } catch (error) {
    if (error instanceof UsageError && error.exitCode !== PLAN_EXIT.error) throw usage(error.message);
    throw error;
  }
}

async function readChanges(file: string, readStdin: () => Promise<string>): Promise<string> {
  try {
    return file === "-" ? await readStdin() : await readFile(file, "utf8");
  } catch (error) {
    throw usage(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** The manifests of one file (a `List` counts as its items), each as a change. */
function manifestsIn(file: string, text: string): PlanChange[] {
  let documents: unknown[];
  try {
    documents = loadAllYaml(text);
  } catch (error) {
    throw usage(`${file} is not YAML or JSON: ${(error as Error).message}`);
  }
  return documents
    .filter((document) => document !== null && document !== undefined)
    .flatMap((document) => {
      const object = document as { kind?: unknown; items?: unknown };
      return typeof object.kind === "string" && object.kind.endsWith("List") && Array.isArray(object.items)
        ? object.items
        : [document];
    })
    .map((document) => {
      const manifest = document as Partial<Manifest>;
      if (typeof manifest.kind !== "string" || typeof manifest.metadata?.name !== "string")
        throw usage(`${file}: every document needs a kind and metadata.name`);
      return { apply: manifest as Manifest };
    });
}

function deletionOf(reference: string): PlanChange {
  const parts = reference.split("/");
  const [kind, first, second] = parts;
  if (!kind || !first || parts.length > 3 || (parts.length === 3 && !second))
    throw usage(`--delete "${reference}" must be <kind>/<namespace>/<name> or <kind>/<name>`);
  return {
    delete: parts.length === 3 ? { kind, namespace: first, name: second ?? "" } : { kind, name: first },
  };
}

async function stdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** What an outcome means, for a person. */
const OUTCOMES: Record<PlannedObject["outcome"], string> = {
  settled: "settles",
  deleted: "is deleted",
  awaitsCommands: "then depends on what is answered to the commands (not run by a plan)",
  lookFailed: "cannot be planned: the backend could not be asked",
  unsettled: "does not settle",
  notOurs: "is not this engine's: nothing written",
  paused: "is paused for a move: nothing written",
  unchanged: "unchanged",
};

/** The plan as text for a terminal. */
export function formatPlan(result: Plan): string {
  const lines: string[] = [];
  const shown = result.objects.filter((object) => object.outcome !== "unchanged" || object.change);
  for (const object of shown) {
    const name = `${object.kind} ${object.namespace ? `${object.namespace}/` : ""}${object.name}`;
    const change = object.change && object.change !== "none" ? `  (you: ${object.change})` : "";
    const mark =
      object.outcome === "deleted" || object.change === "delete"
        ? "-"
        : object.change === "create"
          ? "+"
          : "~";
    lines.push(`${object.steps.length === 0 && object.change === "none" ? "=" : mark} ${name}${change}`);
    for (const step of object.steps) {
      if (step.by)
        lines.push(
          `    ${step.by === "profiles" ? "the ProviderConfig controller" : "AccessRequest preparation"}`,
        );
      else lines.push(`    step ${step.from} → ${step.to}`);
      for (const write of step.writes) {
        lines.push(`      write ${write.part}:`);
        lines.push(...write.operations.map((operation) => `        ${operationText(operation)}`));
      }
      for (const command of step.commands) lines.push(`      command: ${command.description}`);
    }
    if (object.rollout) lines.push(...rolloutLines(object.rollout));
    lines.push(`    ${OUTCOMES[object.outcome]}${object.message ? `: ${object.message}` : ""}`);
  }
  const { summary } = result;
  if (shown.length === 0) lines.push("Nothing would change.");
  lines.push(
    `Plan: ${summary.created.length} created, ${summary.updated.length} updated, ${summary.deleted.length} deleted, ` +
      `${summary.accessAffected.length} access affected; ${summary.commands} command${summary.commands === 1 ? "" : "s"}` +
      (summary.unknown.length > 0
        ? `; ${summary.unknown.length} object${summary.unknown.length === 1 ? "" : "s"} whose end depends on what a plan cannot know`
        : ""),
  );
  return lines.join("\n");
}

/** A Rollout's run, stage by stage: each Cluster in the order it would be asked, and what it would get. */
function rolloutLines(rollout: PlannedRollout): string[] {
  const count = rollout.stages.reduce((sum, stage) => sum + stage.targets.length, 0);
  const lines = [
    `    its run to ${rollout.version}: ${count} Cluster${count === 1 ? "" : "s"} ${rollout.frozen === "now" ? "as it would freeze them now" : "as it froze them"}, in stages`,
  ];
  rollout.stages.forEach((stage, index) => {
    lines.push(`      ${index + 1}. ${stage.name}${stage.targets.length === 0 ? ": no Cluster" : ""}`);
    for (const target of stage.targets) {
      const change = target.settings
        ? `settings ${target.settings.from ?? "(not recorded)"} → ${target.settings.to ?? "(its ProviderConfig is missing)"}`
        : `${target.from ?? "(its provider's version)"} → ${target.to}`;
      const note =
        target.writes.length > 0
          ? ""
          : target.progress === "pending"
            ? "  (not written: asks for it already, gone, or the run is over)"
            : `  (${target.progress})`;
      lines.push(`         ${target.name}  ${change}${note}`);
    }
  });
  return lines;
}

/** One patch operation in a line: `replace /status/phase = "Ready"` (long values cut). */
function operationText(operation: PatchOperation): string {
  if (operation.op === "remove") return `remove ${operation.path}`;
  const value = JSON.stringify(operation.value);
  return `${operation.op} ${operation.path} = ${value.length > 100 ? `${value.slice(0, 97)}...` : value}`;
}
