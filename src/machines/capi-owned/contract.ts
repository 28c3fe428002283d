/**
 * What a kind of the Cluster API-owned family gives the family's recipes ({@link CapiOwnedContract}), and the
 * data its step reads and orders: the publication the runtime saw, the observation, the commands, the step's
 * input and result, and the pure functions made from a contract.
 */

import type { AnyStateMachine } from "xstate";
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { ApiEndpoint } from "../../api/cluster-api.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject, ObjectMeta } from "../../api/common.ts";
import type { BackendOrder } from "../backend-cluster/backend-cluster.ts";
import type { ProfileClaimant } from "../cluster-profile/profile-reference.ts";
import type { StepBasics } from "../shared/kind-step.ts";
import type { MachineStep } from "../shared/machine-step.ts";
import type { CapiOwnedFacts } from "./machine.ts";
import type { CapiOwnedStatusFields, CapiOwnedStatusObject, CapiOwnedStatusSpec } from "./status.ts";

/** What the runtime publishes for a CAPI-owned object. Commands carry no secret: the runtime fetches access. */
export type PublicationCommand =
  /** Write the kubeconfig Secret (when `kubeconfig`) and the ClusterEndpoint for `endpoint`. */
  | {
      readonly kind: "publish";
      readonly capiCluster: string;
      readonly endpoint: ApiEndpoint;
      readonly kubeconfig: boolean;
    }
  | { readonly kind: "unpublish"; readonly capiCluster: string | undefined };

/** What the runtime saw of the objects the step publishes. */
export interface CapiOwnedPublication {
  /**
   * The `<cluster>-kubeconfig` Secret: ours and holding the backend's current admin credentials, ours but
   * behind them (rotated at the backend; only kinds that rotate it see this), absent, someone else's, or
   * not wanted (no admin access).
   */
  readonly kubeconfig: "current" | "stale" | "missing" | "notOurs" | "notWanted";
  /** The ClusterEndpoint holds the published endpoint. */
  readonly endpointCurrent: boolean;
}

/** What one look at the world found. */
export interface CapiOwnedObservation {
  /** The backend's view; `{ exists: false }` when it was not asked (no owner yet, not ours). */
  readonly backend: ClusterObservation;
  readonly publication: CapiOwnedPublication;
}

/** Whether this engine acts on an object, decided once, before anything else (and before any backend call). */
export type CapiOwnedResponsibility =
  /** Annotated `cluster.x-k8s.io/managed-by` (kinds that honour it): someone else manages it; no write at all. */
  | "externallyManaged"
  /** Annotated `openmcp.cloud/operation: ignore`: no write at all. */
  | "ignored"
  /** Its profile belongs to another provider, or is missing and not named like ours: no write at all. */
  | "foreign"
  /** It or its CAPI Cluster is paused: only the Paused condition is written, nothing else happens. */
  | "paused"
  | "ours";

/** An object a CAPI Cluster owns, as the step reads it. */
export interface CapiOwnedObject<Status = unknown> extends CapiOwnedStatusObject<Status> {
  readonly spec: { readonly profile: string; readonly controlPlaneEndpoint?: ApiEndpoint | undefined };
}

/** Everything one step of a CAPI-owned object needs (`Key` is where the input holds it); all of it data. */
export type CapiOwnedStepInput<Key extends string, Obj> = StepBasics & {
  readonly [key in Key]: Obj;
} & {
  readonly profile: ClusterProfile | undefined;
  readonly providerName: string;
  readonly observation: CapiOwnedObservation;
  /** The ProviderConfig's defaultVersion, for an object that asks for none (kinds whose version may be absent). */
  readonly defaultVersion?: string;
  /** While its profile is missing: the names of this provider's profiles, to name beside the missing one. */
  readonly knownProfiles?: readonly string[];
};

/** What the runtime does for a CAPI-owned object; the backend's target is the reconcile's own. No secret in any. */
export type CapiOwnedCommand = BackendOrder | PublicationCommand;

/** How a kind is told of its owning CAPI Cluster's pause, read as a name and a flag. */
export interface OwnerPause {
  readonly paused: boolean;
  readonly name: string | undefined;
}

/**
 * The types of one CAPI-owned kind, by name (as `kindStep` takes a kind's): where its step input holds the object
 * (`key`), the object, its status, its facts, its step input, and what the runtime gives it of the owning CAPI
 * Cluster (`owner`).
 */
export interface CapiOwnedKind {
  readonly key: string;
  readonly object: CapiOwnedObject<this["status"]>;
  readonly status: CapiOwnedStatusFields;
  readonly facts: CapiOwnedFacts;
  readonly input: CapiOwnedStepInput<this["key"], this["object"]>;
  readonly owner: unknown;
}

/** What a CAPI-owned kind is: the contract it keeps with Cluster API; everything else is the family's. */
export interface CapiOwnedContract<K extends CapiOwnedKind> {
  /** Where a step input holds the object (`cluster`, `controlPlane`). */
  readonly key: K["key"];
  /** The kind's statechart (made by `capiOwnedMachine`). */
  readonly machine: AnyStateMachine;
  /** The state in which it serves: with an endpoint, the endpoint is written and the contract signalled. */
  readonly servingState: string;
  /** Our finalizer on its objects. */
  readonly finalizer: string;
  /** Whether `cluster.x-k8s.io/managed-by` hands it to someone else (the InfraCluster contract). */
  readonly honoursManagedBy: boolean;
  /** The Kubernetes version the object asks for (absent or empty: the default). */
  requestedVersion(object: K["object"]): string | undefined;
  /** The kind's own facts, besides the family's (given the owner's name). */
  ownFacts(input: K["input"], owner: string | undefined): Omit<K["facts"], keyof CapiOwnedFacts>;
  /** Whether the owning CAPI Cluster pauses it, from what the runtime gives the kind (`owner`). */
  ownerPause(object: K["object"], owner: K["owner"]): OwnerPause;
  readonly status: CapiOwnedStatusSpec<K["object"], K["status"], K["facts"]>;
}

/** The desired object of a CAPI-owned kind: metadata, the spec field the machine owns, status. */
export type CapiOwnedStepResult<Obj extends { readonly metadata: ObjectMeta }, Status> = MachineStep<
  Obj["metadata"],
  Status,
  CapiOwnedCommand
>;

/** The pure functions of one CAPI-owned kind, all made from its contract. */
export interface CapiOwnedSteps<K extends CapiOwnedKind> {
  /** Decides {@link CapiOwnedResponsibility}, once, before anything else. */
  responsibility(
    object: K["object"],
    profile: ClusterProfile | undefined,
    claimant: ProfileClaimant,
    owner: K["owner"],
  ): CapiOwnedResponsibility;
  /** Why a paused object is paused (the contract's two ways), or undefined when it is not. */
  pausedBy(object: K["object"], owner: K["owner"]): string | undefined;
  /** The backend's key for it: its own UID, so it never meets another object's cluster. */
  target(object: K["object"], profile: ClusterProfile | undefined, settings?: JsonObject): ClusterTarget;
  /** The facts of the world, level-based: nothing here depends on what happened before. */
  facts(input: K["input"]): K["facts"];
  /** One step of an object that is ours and not paused. */
  step(input: K["input"]): CapiOwnedStepResult<K["object"], K["status"]>;
  /** The step of a paused object: the machine does not move, nothing is ordered, only the Paused condition says so and why. */
  pausedStep(
    input: { readonly [key in K["key"]]: K["object"] } & { readonly why: string; readonly now: string },
  ): CapiOwnedStepResult<K["object"], K["status"]>;
  /** The status while the backend cannot be looked at: the main condition False with `failure`; nothing moves. */
  unobservedStatus(object: K["object"], failure: string, now: string): K["status"] | undefined;
}
