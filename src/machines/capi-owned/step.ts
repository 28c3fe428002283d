/**
 * The one pure step recipe of the kinds Cluster API owns (EngineCluster, EngineControlPlane), on the generic
 * step (`kindStep`): whether the engine acts on an object (ignored, externally managed, foreign, paused), its
 * facts, what each action orders, the endpoint it writes once into its spec, the provider label, its status
 * and the step of a paused object. A kind gives only its contract ({@link CapiOwnedContract}).
 */

import type { Draft } from "immer";
import type { AnyStateMachine } from "xstate";
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import { type ApiEndpoint, CAPI_ANNOTATIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject, ObjectMeta } from "../../api/common.ts";
import { ANNOTATIONS, LABELS, OPERATIONS } from "../../api/constants.ts";
import {
  apiEndpointOf,
  type BackendClusterFacts,
  type BackendOrder,
  backendClusterFacts,
  backendTarget,
} from "../backend-cluster/backend-cluster.ts";
import { type ProfileClaimant, profileReference } from "../cluster-profile/profile-reference.ts";
import type { FinalizerWish } from "../shared/finalizer.ts";
import { type ActionContext, kindStep, type StepBasics } from "../shared/kind-step.ts";
import type { MachineStep } from "../shared/machine-step.ts";
import type { CapiOwnedFacts } from "./machine.ts";
import {
  type CapiOwnedStatusFields,
  type CapiOwnedStatusObject,
  type CapiOwnedStatusSpec,
  desiredCapiOwnedStatus,
  pausedObjectStatus,
} from "./status.ts";

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

/** The machine state an object stores in `status.state` (`pending` before the first step). */
export function readStoredState(object: {
  readonly status?: { readonly state?: string } | undefined;
}): string {
  const state = object.status?.state;
  return typeof state === "string" && state !== "" ? state : "pending";
}

/** The endpoints a step works with: the one the contract publishes (the spec's once set), the backend's now. */
export interface PublishedEndpoints {
  readonly endpoint: ApiEndpoint | undefined;
  readonly backendEndpoint: ApiEndpoint | undefined;
}

/** {@link PublishedEndpoints} of an object whose spec holds `specEndpoint` (once set, never another). */
export function publishedEndpoints(
  specEndpoint: ApiEndpoint | undefined,
  facts: BackendClusterFacts,
): PublishedEndpoints {
  const backendEndpoint = facts.backend.exists ? apiEndpointOf(facts.backend.endpoint) : undefined;
  return { endpoint: specEndpoint ?? backendEndpoint, backendEndpoint };
}

/** The publish command for the owner at `endpoint`; none before both are known. The kubeconfig only if ours or absent. */
export function publishCommand(
  owner: string | undefined,
  endpoint: ApiEndpoint | undefined,
  kubeconfig: "current" | "stale" | "missing" | "notOurs" | "notWanted",
): PublicationCommand | undefined {
  if (!owner || !endpoint) return undefined;
  return {
    kind: "publish",
    capiCluster: owner,
    endpoint,
    kubeconfig: kubeconfig !== "notOurs" && kubeconfig !== "notWanted",
  };
}

/** Labels the object with the provider that acts on it, except while it lets go or has no profile. */
export function labelWithProvider(
  draft: Draft<ObjectMeta>,
  {
    input,
    facts,
    finalizer,
  }: {
    readonly input: { readonly profile: unknown; readonly providerName: string };
    readonly facts: BackendClusterFacts;
    readonly finalizer: FinalizerWish;
  },
): void {
  if (finalizer === "remove" || facts.deleting || !input.profile) return;
  draft.labels ??= {};
  draft.labels[LABELS.provider] = input.providerName;
}

/** The step of a paused object: the machine does not move, nothing is ordered, only `status` (its Paused condition) is written. */
function pausedStep<Metadata, Status, Command>(
  object: { readonly metadata: Metadata; readonly status?: { readonly state?: string } | undefined },
  status: Status,
): MachineStep<Metadata, Status, Command> {
  const state = readStoredState(object);
  return {
    previousState: state,
    event: undefined,
    state,
    desired: { metadata: object.metadata, status },
    commands: [],
    events: [],
    requeueAfterMs: undefined,
  };
}

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
};

/** What the runtime does for a CAPI-owned object; the backend's target is the reconcile's own. No secret in any. */
export type CapiOwnedCommand = BackendOrder | PublicationCommand;

/** How a kind is told of its owning CAPI Cluster's pause, read as a name and a flag. */
export interface OwnerPause {
  readonly paused: boolean;
  readonly name: string | undefined;
}

/** What a CAPI-owned kind is: the contract it keeps with Cluster API; everything else is the family's. */
export interface CapiOwnedContract<
  Key extends string,
  Obj extends CapiOwnedObject<Status>,
  Status extends CapiOwnedStatusFields,
  Facts extends CapiOwnedFacts,
  Input extends CapiOwnedStepInput<Key, Obj>,
  Owner,
> {
  /** Where a step input holds the object (`cluster`, `controlPlane`). */
  readonly key: Key;
  /** The kind's statechart (made by `capiOwnedMachine`). */
  readonly machine: AnyStateMachine;
  /** The state in which it serves: with an endpoint, the endpoint is written and the contract signalled. */
  readonly servingState: string;
  /** Our finalizer on its objects. */
  readonly finalizer: string;
  /** Whether `cluster.x-k8s.io/managed-by` hands it to someone else (the InfraCluster contract). */
  readonly honoursManagedBy: boolean;
  /** The Kubernetes version the object asks for (absent or empty: the default). */
  requestedVersion(object: Obj): string | undefined;
  /** The kind's own facts, besides the family's (given the owner's name). */
  ownFacts(input: Input, owner: string | undefined): Omit<Facts, keyof CapiOwnedFacts>;
  /** Whether the owning CAPI Cluster pauses it, from what the runtime gives the kind (`owner`). */
  ownerPause(object: Obj, owner: Owner): OwnerPause;
  readonly status: CapiOwnedStatusSpec<Obj, Status, Facts>;
}

/** The desired object of a CAPI-owned kind: metadata, the spec field the machine owns, status. */
export type CapiOwnedStepResult<Obj extends { readonly metadata: ObjectMeta }, Status> = MachineStep<
  Obj["metadata"],
  Status,
  CapiOwnedCommand
>;

/** The pure functions of one CAPI-owned kind, all made from its contract. */
export interface CapiOwnedSteps<
  Key extends string,
  Obj extends CapiOwnedObject<Status>,
  Status,
  Facts,
  Input,
  Owner,
> {
  /** Decides {@link CapiOwnedResponsibility}, once, before anything else. */
  responsibility(
    object: Obj,
    profile: ClusterProfile | undefined,
    claimant: ProfileClaimant,
    owner: Owner,
  ): CapiOwnedResponsibility;
  /** Why a paused object is paused (the contract's two ways), or undefined when it is not. */
  pausedBy(object: Obj, owner: Owner): string | undefined;
  /** The backend's key for it: its own UID, so it never meets another object's cluster. */
  target(object: Obj, profile: ClusterProfile | undefined, settings?: JsonObject): ClusterTarget;
  /** The facts of the world, level-based: nothing here depends on what happened before. */
  facts(input: Input): Facts;
  /** One step of an object that is ours and not paused. */
  step(input: Input): CapiOwnedStepResult<Obj, Status>;
  /** The step of a paused object: the machine does not move, nothing is ordered, only the Paused condition says so and why. */
  pausedStep(
    input: { readonly [key in Key]: Obj } & { readonly why: string; readonly now: string },
  ): CapiOwnedStepResult<Obj, Status>;
}

/** What each of the family's actions orders (`addFinalizer`, `removeFinalizer`, `recordEvent` are every kind's). */
const capiOwnedCommands = {
  // Only what the backend does not hold yet: after a restart mid-provisioning, the cluster is adopted.
  createCluster: (params, { facts }) =>
    typeof params?.version === "string" && !facts.backend.exists
      ? { kind: "create", version: params.version }
      : undefined,
  updateCluster: (params) =>
    typeof params?.version === "string" ? { kind: "update", version: params.version } : undefined,
  deleteCluster: () => ({ kind: "delete" }),
  publish: (_, { facts, input }) =>
    publishCommand(
      facts.owner,
      publishedEndpoints(input.object.spec.controlPlaneEndpoint, facts).endpoint,
      input.publication,
    ),
  unpublish: (_, { facts }) => ({ kind: "unpublish", capiCluster: facts.owner }),
} satisfies Record<
  string,
  (
    params: Readonly<Record<string, unknown>> | undefined,
    context: ActionContext<
      { readonly object: CapiOwnedObject; readonly publication: CapiOwnedPublication["kubeconfig"] },
      CapiOwnedFacts
    >,
  ) => CapiOwnedCommand | undefined
>;

/**
 * The pure functions of the CAPI-owned kind `contract` describes. Guarantees (besides the generic step's):
 * no command before a CAPI Cluster owns the object (and its owner is ready); the finalizer is stored with the
 * first create; the endpoint in the spec is written once and never changed; the contract's signal only with
 * that endpoint, and never taken back; a downgrade is never ordered.
 */
export function capiOwnedSteps<
  Key extends string,
  Obj extends CapiOwnedObject<Status>,
  Status extends CapiOwnedStatusFields,
  Facts extends CapiOwnedFacts,
  Input extends CapiOwnedStepInput<Key, Obj>,
  Owner,
>(
  contract: CapiOwnedContract<Key, Obj, Status, Facts, Input, Owner>,
): CapiOwnedSteps<Key, Obj, Status, Facts, Input, Owner> {
  const objectOf = (input: { readonly [key in Key]: Obj }): Obj => input[contract.key];

  const pausedBy = (object: Obj, owner: Owner): string | undefined => {
    if (object.metadata.annotations?.[CAPI_ANNOTATIONS.paused] !== undefined) {
      return `annotation ${CAPI_ANNOTATIONS.paused} is set`;
    }
    const pause = contract.ownerPause(object, owner);
    return pause.paused ? `Cluster ${pause.name} has spec.paused: true` : undefined;
  };

  const facts = (input: Input): Facts => {
    const object = objectOf(input);
    const owner = owningCapiCluster(object.metadata);
    const { kubeconfig, endpointCurrent } = input.observation.publication;
    return {
      ...backendClusterFacts(
        { metadata: object.metadata, spec: { kubernetes: { version: contract.requestedVersion(object) } } },
        contract.finalizer,
        input.profile,
        input.defaultVersion,
        input.observation.backend,
      ),
      owner,
      ...contract.ownFacts(input, owner),
      // A kubeconfig behind the backend's credentials is published again; someone else's is left alone.
      published: endpointCurrent && kubeconfig !== "missing" && kubeconfig !== "stale",
    } as Facts;
  };

  /** What the action table is given: the object and what the runtime saw of its kubeconfig. */
  const actionInput = (input: Input) => ({
    object: objectOf(input),
    publication: input.observation.publication.kubeconfig,
  });
  const inServingState = (state: string) =>
    state === contract.servingState || state.startsWith(`${contract.servingState}.`);

  const step = kindStep<
    Input,
    Obj,
    Facts,
    CapiOwnedCommand,
    Status,
    PublishedEndpoints & { readonly serving: boolean }
  >({
    machine: contract.machine,
    object: objectOf,
    readState: readStoredState,
    facts,
    finalizer: contract.finalizer,
    actions: Object.fromEntries(
      Object.entries(capiOwnedCommands).map(([name, meaning]) => [
        name,
        (params: Readonly<Record<string, unknown>> | undefined, context: ActionContext<Input, Facts>) =>
          meaning(params, { facts: context.facts, input: actionInput(context.input) }),
      ]),
    ),
    derive: ({ input, facts, state }) => {
      const endpoints = publishedEndpoints(objectOf(input).spec.controlPlaneEndpoint, facts);
      return { ...endpoints, serving: inServingState(state) && endpoints.endpoint !== undefined };
    },
    metadata: (draft, transitioned) => labelWithProvider(draft as Draft<ObjectMeta>, transitioned),
    // The endpoint is written once, when it first serves; CEL refuses any change.
    spec: ({ input }, { serving, endpoint }) =>
      objectOf(input).spec.controlPlaneEndpoint === undefined && serving && endpoint
        ? { controlPlaneEndpoint: endpoint }
        : undefined,
    status: ({ input, facts, state, phase }, { serving, endpoint, backendEndpoint }) =>
      desiredCapiOwnedStatus(contract.status, {
        object: objectOf(input),
        facts,
        state,
        phase,
        serving,
        endpoint,
        backendEndpoint,
        ...(input.lastError === undefined ? {} : { lastError: input.lastError }),
        now: input.now,
      }),
  });

  return {
    responsibility(object, profile, claimant, owner) {
      const annotations = object.metadata.annotations ?? {};
      if (annotations[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
      // One holding our finalizer stays ours when marked externally managed after we built for it, so what
      // was built can still be cleaned up.
      const ours = object.metadata.finalizers?.includes(contract.finalizer) ?? false;
      if (contract.honoursManagedBy && !ours && annotations[CAPI_ANNOTATIONS.managedBy] !== undefined) {
        return "externallyManaged";
      }
      // A profile of another provider makes it foreign even when it holds our finalizer: every provider's
      // engines use the same finalizer name.
      const reference = profileReference(
        { profileName: object.spec.profile, labels: object.metadata.labels },
        profile,
        claimant,
      );
      if (reference === "foreign") return "foreign";
      return pausedBy(object, owner) === undefined ? "ours" : "paused";
    },
    pausedBy,
    target: (object, profile, settings) => backendTarget(object, "Exclusive", profile, settings),
    facts,
    step,
    pausedStep: (input) => {
      const object = objectOf(input);
      return pausedStep(object, pausedObjectStatus(object, input.why, input.now));
    },
  };
}
