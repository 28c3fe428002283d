/** What every machine-backed kind's pure step returns: the desired object, commands, Events and when to look again. */

/** A Kubernetes Event a machine asks the runtime to record; messages never hold secrets. */
export interface EventRecord {
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/**
 * The parts of an object a step may change: metadata (finalizers, labels, annotations), the spec
 * fields a contract gives the controller (e.g. Cluster API's `controlPlaneEndpoint`), and status.
 */
export interface DesiredObject<Metadata, Status> {
  readonly metadata: Metadata;
  /** Spec fields the machine owns, written with the metadata; fields not named stay the user's. */
  readonly spec?: Readonly<Record<string, unknown>>;
  /** `undefined` only when the step leaves an object without status alone. */
  readonly status: Status | undefined;
}

/**
 * One step of one object's machine (every kind's comes from `kindStep`, `kind-step.ts`). The runtime
 * diffs `desired` against the stored object once, at write time: metadata and owned spec fields first,
 * as one patch, so a finalizer is stored before any command runs; the status last.
 */
export interface MachineStep<Metadata, Status, Command> {
  /** The machine state before the step (as read from the object). */
  readonly previousState: string;
  /** The event the machine was given; `undefined` when the machine was not run (e.g. a paused EngineCluster). */
  readonly event: { readonly type: string } | undefined;
  /** The machine state after the step, as the object will show it (e.g. `deleting.releasing`). */
  readonly state: string;
  readonly desired: DesiredObject<Metadata, Status>;
  /** Commands for the runtime to carry out, in order, after the metadata is stored. */
  readonly commands: readonly Command[];
  readonly events: readonly EventRecord[];
  /**
   * How many of `events`, from the first, tell the machine's transitions: a reconcile tells only the last Normal one
   * of those (states passed through within it were never visible), and every one after them (what the step ordered
   * or found, e.g. the Clusters a rollout asked). Absent: all of them are transitions.
   */
  readonly transitions?: number;
  /** Look again after this long even without a change; `undefined` = wait for a change. */
  readonly requeueAfterMs: number | undefined;
}
