/** `openmcp-engine explain <kind> <namespace>/<name>`: where a resource's machine is, why, what it waits for, what happened. */

import { parseArgs } from "node:util";
import { CoreV1Api, type CoreV1Event, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { AnyStateMachine } from "xstate";
import type { Condition, ObjectMeta } from "../api/common.ts";
import { SHARD_LEASE_LABELS } from "../api/constants/shard-lease.ts";
import { LABELS } from "../api/constants.ts";
import { errorMessage, isNotFound } from "../api/error-message.ts";
import { referenceKey } from "../api/object-key.ts";
import { rfc3339 } from "../machines/shared/rfc3339.ts";
import { loadKubeConfig } from "../runtime/api-server/load-kubeconfig.ts";
import { MACHINE_KINDS } from "../runtime/kinds/registry.ts";
import { LEASES, type Lease } from "../runtime/leadership/lease.ts";
import type { Explanation, MachineKind, MachineObject, ObjectReader } from "../runtime/machine-kind.ts";
import { liveMembersAt } from "../runtime/sharding/membership.ts";
import { ownerOf } from "../runtime/sharding/rendezvous.ts";
import { statechartOf } from "../statecharts/graph.ts";
import { parseInteger } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

/** The help text of `explain`. */
export const explainUsage = `Usage: openmcp-engine explain <kind> <namespace>/<name> [flags]

Explains one resource for a person on call: the state of its machine, why it is there (the conditions
that hold it), what it waits for, how it moves on (the guards of the statechart), its conditions, and
its recent transitions from the Kubernetes Events about it. Read-only: it only reads the API server.

Kinds: ${MACHINE_KINDS.map((kind) => kind.definition.names.join(", ")).join("; ")} (any case).
An AccessRequest's Secret is named, never read: no credential is printed.

Flags:
  --kubeconfig <path>   API server access (default: $KUBECONFIG, else in-cluster, else ~/.kube/config)
  --events <n>          how many of the latest Events to show, 0-100 (default: 10)
  -h, --help            show this help

Examples: openmcp-engine explain cluster demo/platform --kubeconfig .state/kubeconfig
          openmcp-engine explain ar demo/viewer --kubeconfig .state/kubeconfig`;

/** A Kubernetes Event about the resource, as shown. */
export interface ExplainedEvent {
  /** RFC 3339, the Event's last occurrence. */
  readonly time: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
}

/** One way out of the current state, as the statechart says. */
export interface ExplainedExit {
  readonly guard: string | undefined;
  /** The guard in words. */
  readonly when: string;
  readonly target: string;
  /** The target is the state itself: its entry actions run again. */
  readonly again: boolean;
}

/** A kind `explain` knows: the `kind` of a registered machine kind, e.g. `Cluster`. */
export type ExplainedKind = string;

export type { Explanation } from "../runtime/machine-kind.ts";

/** Everything `explain` prints about one resource. */
export interface ExplainReport {
  readonly kind: ExplainedKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly explanation: Explanation;
  readonly exits: readonly ExplainedExit[];
  readonly conditions: readonly Condition[];
  readonly events: readonly ExplainedEvent[];
  /**
   * Sharded mode: the live replica that owns the object and how many are live; "unknown" if the
   * membership Leases could not be read; absent when its provider runs unsharded.
   */
  readonly replica?: { readonly owner: string | undefined; readonly live: number } | "unknown";
}

/** Runs `explain` with its arguments; writes the report with `write`. */
export async function explain(args: string[], write: (text: string) => void = console.log): Promise<void> {
  const { kind, namespace, name, kubeconfig, events } = parseExplainArgs(args);
  const { kubeConfig } = loadKubeConfig(kubeconfig);
  write(formatReport(await explainReport(kubeConfig, kind, namespace, name, events)));
}

/** The kinds `explain` knows (every registered machine kind), by every name a person may type (lower case). */
function kindNamed(name: string): MachineKind | undefined {
  return MACHINE_KINDS.find((kind) => kind.definition.names.includes(name));
}

/** The parts of an object `explain` reads the same way for every kind. */
interface ExplainedObject {
  readonly metadata: ObjectMeta;
  readonly status?: { readonly conditions?: readonly Condition[] };
}

function parseExplainArgs(args: string[]) {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  const options = { kubeconfig: { type: "string" }, events: { type: "string" } } as const;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, explainUsage);
  }
  const [kindName, reference, ...rest] = parsed.positionals;
  if (kindName === undefined || reference === undefined || rest.length > 0) {
    throw new UsageError("explain takes a kind and <namespace>/<name>", explainUsage);
  }
  const kind = kindNamed(kindName.toLowerCase())?.definition.kind;
  if (kind === undefined) {
    const known = MACHINE_KINDS.flatMap((entry) => entry.definition.names);
    throw new UsageError(
      `explain does not know kind "${kindName}"; it knows: ${known.join(", ")}`,
      explainUsage,
    );
  }
  const parts = reference.split("/");
  const [namespace, name] = parts;
  if (parts.length !== 2 || !namespace || !name) {
    throw new UsageError(`"${reference}" must be <namespace>/<name>`, explainUsage);
  }
  return {
    kind,
    namespace,
    name,
    kubeconfig: parsed.values.kubeconfig,
    events: parseInteger("events", parsed.values.events ?? "10", 0, 100, explainUsage),
  };
}

/** Reads the resource (and what its kind's explanation needs) and its Events, and explains it. */
export async function explainReport(
  kubeConfig: KubeConfig,
  kind: ExplainedKind,
  namespace: string,
  name: string,
  eventCount = 10,
): Promise<ExplainReport> {
  const descriptor = MACHINE_KINDS.find((entry) => entry.definition.kind === kind);
  if (!descriptor) throw new ExplainError(`the engine has no machine for kind ${kind}`);
  const { resource, machine, guardPhrases } = descriptor.definition;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  let object: ExplainedObject;
  try {
    object = (await custom.getNamespacedCustomObject({ ...resource, namespace, name })) as ExplainedObject;
  } catch (error) {
    if (isNotFound(error)) {
      throw new ExplainError(`${kind} ${namespace}/${name} not found`);
    }
    throw new ExplainError(`could not read ${kind} ${namespace}/${name}: ${errorMessage(error)}`);
  }
  const explanation = await descriptor.explain(object as MachineObject, readerFor(custom));
  const shardKey = descriptor.shardKey?.(object as MachineObject) ?? referenceKey({ namespace, name });
  const replica = await replicaOf(custom, object.metadata.labels?.[LABELS.provider], shardKey);
  return {
    kind,
    namespace,
    name,
    uid: object.metadata.uid ?? "",
    explanation,
    exits: explanation.state === undefined ? [] : exitsOf(machine, guardPhrases, explanation.state),
    conditions: object.status?.conditions ?? [],
    events: await readEvents(kubeConfig, namespace, object.metadata.uid ?? "", eventCount),
    ...(replica ? { replica } : {}),
  };
}

/** Which live replica of the provider's shard ring owns `shardKey` (by the membership Leases, wall clock). */
async function replicaOf(
  custom: CustomObjectsApi,
  provider: string | undefined,
  shardKey: string,
): Promise<ExplainReport["replica"]> {
  if (!provider) return undefined;
  let leases: Lease[];
  try {
    const list = (await custom.listClusterCustomObject({
      ...LEASES,
      labelSelector: `${SHARD_LEASE_LABELS.shardRing}=${provider}`,
    })) as { items: Lease[] };
    leases = list.items;
  } catch {
    return "unknown"; // e.g. no right to list Leases: say so rather than guess
  }
  if (leases.length === 0) return undefined;
  const live = liveMembersAt(leases, Date.now());
  return { owner: ownerOf(shardKey, live), live: live.length };
}

/** Why `explain` could not read what it explains; the message says what to do. */
export class ExplainError extends Error {
  override readonly name = "ExplainError";
}

/** Reads related objects for a kind's explanation: undefined when absent, "unknown" when unreadable (e.g. RBAC). */
function readerFor(custom: CustomObjectsApi): ObjectReader {
  return async (resource, namespace, name) => {
    try {
      return namespace
        ? await custom.getNamespacedCustomObject({ ...resource, namespace, name })
        : await custom.getClusterCustomObject({ ...resource, name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      return "unknown";
    }
  };
}

async function readEvents(
  kubeConfig: KubeConfig,
  namespace: string,
  uid: string,
  count: number,
): Promise<ExplainedEvent[]> {
  if (count === 0 || uid === "") return [];
  const list = await kubeConfig
    .makeApiClient(CoreV1Api)
    .listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${uid}` });
  // Event times have whole seconds; within a second, the order of creation (resourceVersion) decides.
  const order = (event: CoreV1Event) => Number(event.metadata.resourceVersion ?? "0") || 0;
  return [...list.items]
    .map((event) => ({ event, shown: explainedEvent(event) }))
    .sort((a, b) => a.shown.time.localeCompare(b.shown.time) || order(a.event) - order(b.event))
    .slice(-count)
    .map(({ shown }) => shown);
}

function explainedEvent(event: CoreV1Event): ExplainedEvent {
  const when =
    event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata.creationTimestamp;
  return {
    time: when ? rfc3339(new Date(when).getTime()) : "",
    type: event.type ?? "",
    reason: event.reason ?? "",
    message: event.message ?? "",
    count: event.count ?? 1,
  };
}

/** The transitions of `machine` out of `state` and its enclosing states, in the order the machine tries them. */
export function exitsOf(
  machine: AnyStateMachine,
  phrases: Readonly<Record<string, string>>,
  state: string,
): ExplainedExit[] {
  const chart = statechartOf(machine);
  const parts = state.split(".");
  const lineage = parts.map((_, index) => parts.slice(0, index + 1).join("."));
  return lineage.reverse().flatMap((source) =>
    chart.transitions
      .filter((transition) => transition.source === source)
      .map((transition) => ({
        guard: transition.guard,
        when:
          transition.guard === undefined
            ? `on ${transition.event}`
            : (phrases[transition.guard] ?? transition.guard),
        target: transition.target,
        again: transition.target === source && transition.reenter,
      })),
  );
}

/** The report as text for a terminal. */
export function formatReport(report: ExplainReport): string {
  const { explanation } = report;
  const lines = [`${report.kind} ${report.namespace}/${report.name}  (uid ${report.uid})`];
  lines.push(
    `State:        ${explanation.state ?? "(none: no engine has interpreted it)"}${
      explanation.phase ? `  (phase ${explanation.phase})` : ""
    }`,
  );
  if (report.replica === "unknown")
    lines.push("Replica:      unknown (could not list the membership Leases)");
  else if (report.replica)
    lines.push(
      `Replica:      ${report.replica.owner ?? "none live"}  (sharded: ${report.replica.live} live replica${report.replica.live === 1 ? "" : "s"})`,
    );
  lines.push(...labelled("Why:", explanation.why));
  lines.push(...labelled("Waiting for:", explanation.waitingFor));
  if (report.exits.length > 0) {
    lines.push(`Moves on when (the ${report.kind} statechart, in the order it checks):`);
    const width = Math.max(...report.exits.map((exit) => exit.when.length));
    for (const exit of report.exits) {
      const guard = exit.guard ? `  [${exit.guard}]` : "";
      lines.push(`  - ${exit.when.padEnd(width)}  → ${exit.target}${exit.again ? " (again)" : ""}${guard}`);
    }
  }
  lines.push("Conditions:");
  if (report.conditions.length === 0) lines.push("  (none)");
  else {
    lines.push(
      ...table(
        report.conditions.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime, c.message]),
        ["TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"],
      ),
    );
  }
  lines.push("Recent transitions (Events, oldest first):");
  if (report.events.length === 0) {
    lines.push(
      "  (none: Events are kept for an hour by default, and only reconciles that change something record one)",
    );
  } else {
    lines.push(
      ...table(
        report.events.map((e) => [
          e.time,
          e.type,
          e.reason,
          `${e.message}${e.count > 1 ? ` (×${e.count})` : ""}`,
        ]),
        ["TIME", "TYPE", "REASON", "MESSAGE"],
      ),
    );
  }
  return lines.join("\n");
}

function labelled(label: string, items: readonly string[]): string[] {
  const pad = " ".repeat(14);
  if (items.length === 0) return [`${label.padEnd(14)}-`];
  return items.map((item, index) => `${index === 0 ? label.padEnd(14) : pad}${item}`);
}

/** Rows with aligned columns (the last one free), indented by two. */
function table(rows: readonly string[][], header: readonly string[]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  return all.map((row) =>
    `  ${row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")}`.trimEnd(),
  );
}
