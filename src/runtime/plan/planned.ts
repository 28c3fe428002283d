/** What `plan` answers: per object, the steps the engine would take, with their writes and commands; a summary. */
import type { PatchOperation } from "../../machines/shared/json-patch.ts";
import type { EventRecord } from "../../machines/shared/machine-step.ts";
import type { PlannedRollout } from "./rollout-stages.ts";

/** One write the engine would send: the object (metadata and the spec fields a machine owns) or its status. */
export interface PlannedWrite {
  readonly part: "object" | "status";
  readonly operations: readonly PatchOperation[];
}

/** A backend or API command a step would issue, in words and as the step gave it. */
export interface PlannedCommand {
  readonly description: string;
  readonly command: unknown;
}

/** One step of one object's machine, as the engine would take it, with what it would write and issue. */
export interface PlannedStep {
  /**
   * Who takes it: the object's machine (absent), or the engine's controller that writes what machines read:
   * `profiles` (a ProviderConfig's ClusterProfile), `preparation` (an AccessRequest's labels and reference).
   */
  readonly by?: "profiles" | "preparation";
  /** The machine's state before and after (e.g. `ready` → `updating`); `ClusterProfile` has none. */
  readonly from: string;
  readonly to: string;
  readonly writes: readonly PlannedWrite[];
  readonly commands: readonly PlannedCommand[];
  /**
   * With commands: the status the step desires while the backend answers as it does now. The engine writes the
   * status after the commands, from a new look, which a plan cannot take: this is shown, never counted as known.
   */
  readonly statusIfUnanswered?: readonly PatchOperation[];
  readonly events: readonly EventRecord[];
}

/**
 * Where an object ends in the plan: `settled` (a step found nothing more to write), `deleted` (gone from the
 * API server), `awaitsCommands` (what follows depends on what the backend answers to commands not run: its own,
 * or those of another object its reconciles run after, the kind's `serialize`),
 * `lookFailed` (the backend could not be asked), `unsettled` (still writing after the step limit), `notOurs`
 * (another provider's, or no engine acts on it: nothing written), `paused` (paused for a move), `unchanged`.
 */
export type PlannedOutcome =
  | "settled"
  | "deleted"
  | "awaitsCommands"
  | "lookFailed"
  | "unsettled"
  | "notOurs"
  | "paused"
  | "unchanged";

/** Everything the plan says about one object. */
export interface PlannedObject {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** What the proposed changes do to it themselves; absent when only the engine would write to it. */
  readonly change?: "create" | "update" | "delete" | "none";
  readonly steps: readonly PlannedStep[];
  readonly outcome: PlannedOutcome;
  /** Why the plan cannot say more (a failed look, a step limit), for a person. */
  readonly message?: string;
  /** A Rollout the changes create or change: its whole run, stage by stage (its steps show only the first look). */
  readonly rollout?: PlannedRollout;
}

/** The plan in numbers and names (`kind namespace/name`). */
export interface PlanSummary {
  readonly created: readonly string[];
  readonly updated: readonly string[];
  readonly deleted: readonly string[];
  /** AccessRequests that would be written to or issue commands, or that the changes themselves touch. */
  readonly accessAffected: readonly string[];
  /** Commands that would be issued (backend calls, and API writes a command makes, e.g. a scheduler's claim). */
  readonly commands: number;
  /** Objects whose end the plan cannot know (awaiting commands, a failed look, not settling). */
  readonly unknown: readonly string[];
}

/** What `plan` answers. */
export interface Plan {
  /** The objects touched, the changed ones first, then in the order the engine would first step them. */
  readonly objects: readonly PlannedObject[];
  readonly summary: PlanSummary;
  /** Whether anything would change at all (a write, a deletion, a creation or a command). */
  readonly changes: boolean;
}

/** The summary of a plan's objects, and whether anything would change at all. */
export function summarized(objects: readonly PlannedObject[]): Pick<Plan, "summary" | "changes"> {
  const named = (object: PlannedObject) =>
    `${object.kind} ${object.namespace ? `${object.namespace}/` : ""}${object.name}`;
  const written = (object: PlannedObject) => object.steps.some((step) => step.writes.length > 0);
  const commanded = (object: PlannedObject) => object.steps.some((step) => step.commands.length > 0);
  const created = objects.filter((object) => object.change === "create");
  const deleted = objects.filter(
    (object) =>
      // Gone, or marked for deletion by a change (its finalizers still to go).
      object.outcome === "deleted" || object.change === "delete",
  );
  const updated = objects.filter(
    (object) =>
      !created.includes(object) &&
      !deleted.includes(object) &&
      (object.change === "update" || written(object)),
  );
  const summary: PlanSummary = {
    created: created.map(named),
    updated: updated.map(named),
    deleted: deleted.map(named),
    accessAffected: objects
      .filter(
        (object) =>
          object.kind === "AccessRequest" &&
          ((object.change !== undefined && object.change !== "none") || written(object) || commanded(object)),
      )
      .map(named),
    commands: objects.reduce(
      (sum, object) => sum + object.steps.reduce((count, step) => count + step.commands.length, 0),
      0,
    ),
    unknown: objects
      .filter((object) => ["awaitsCommands", "lookFailed", "unsettled"].includes(object.outcome))
      .map(named),
  };
  const changes =
    summary.created.length + summary.updated.length + summary.deleted.length + summary.commands > 0;
  return { summary, changes };
}
