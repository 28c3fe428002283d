/**
 * The one pure step recipe of the kinds Cluster API owns (EngineCluster, EngineControlPlane), on the generic
 * step (`kindStep`): whether the engine acts on an object (ignored, externally managed, foreign, paused), its
 * facts, what each action orders, the endpoint it writes once into its spec, the provider label, its status
 * and the step of a paused object. A kind gives only its contract ({@link CapiOwnedContract}).
 */

import type { Draft } from "immer";
import { type ApiEndpoint, CAPI_ANNOTATIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { ObjectMeta } from "../../api/common.ts";
import { ANNOTATIONS, LABELS, OPERATIONS } from "../../api/constants.ts";
import {
  apiEndpointOf,
  type BackendClusterFacts,
  backendClusterFacts,
  backendTarget,
} from "../backend-cluster/backend-cluster.ts";
import { profileReference } from "../cluster-profile/profile-reference.ts";
import type { FinalizerWish } from "../shared/finalizer.ts";
import { type ActionContext, kindStep } from "../shared/kind-step.ts";
import type { MachineStep } from "../shared/machine-step.ts";
import { storedState } from "../shared/stored-state.ts";
import type {
  CapiOwnedCommand,
  CapiOwnedContract,
  CapiOwnedKind,
  CapiOwnedObject,
  CapiOwnedPublication,
  CapiOwnedStepInput,
  CapiOwnedSteps,
  PublicationCommand,
} from "./contract.ts";
import type { CapiOwnedFacts } from "./machine.ts";
import {
  type CapiOwnedStatusFields,
  desiredCapiOwnedStatus,
  pausedObjectStatus,
  unobservedCapiOwnedStatus,
} from "./status.ts";

/** The machine state an object stores in `status.state` (`pending` before the first step). */
const readStoredState = storedState("pending");

/** The endpoints a step works with: the one the contract publishes (the spec's once set), the backend's now. */
interface PublishedEndpoints {
  readonly endpoint: ApiEndpoint | undefined;
  readonly backendEndpoint: ApiEndpoint | undefined;
}

/** {@link PublishedEndpoints} of an object whose spec holds `specEndpoint` (once set, never another). */
function publishedEndpoints(
  specEndpoint: ApiEndpoint | undefined,
  facts: BackendClusterFacts,
): PublishedEndpoints {
  const backendEndpoint = facts.backend.exists ? apiEndpointOf(facts.backend.endpoint) : undefined;
  return { endpoint: specEndpoint ?? backendEndpoint, backendEndpoint };
}

/** The publish command for the owner at `endpoint`; none before both are known. The kubeconfig only if ours or absent. */
function publishCommand(
  owner: string | undefined,
  endpoint: ApiEndpoint | undefined,
  kubeconfig: CapiOwnedPublication["kubeconfig"],
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
function labelWithProvider(
  draft: Draft<ObjectMeta>,
  {
    input,
    facts,
    finalizer,
  }: {
    readonly input: { readonly providerName: string };
    readonly facts: BackendClusterFacts;
    readonly finalizer: FinalizerWish;
  },
): void {
  if (finalizer === "remove" || facts.deleting) return;
  // With its profile missing, the label claims the report of it (see profileReference's `ownKind`).
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
export function capiOwnedSteps<K extends CapiOwnedKind>(contract: CapiOwnedContract<K>): CapiOwnedSteps<K> {
  type Obj = K["object"];
  type Input = K["input"];
  type Facts = K["facts"];
  const objectOf = (input: { readonly [key in K["key"]]: Obj }): Obj => input[contract.key];

  const pausedBy = (object: Obj, owner: K["owner"]): string | undefined => {
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

  const step = kindStep<{
    input: Input;
    object: Obj;
    facts: Facts;
    command: CapiOwnedCommand;
    status: K["status"];
    derived: PublishedEndpoints & { readonly serving: boolean };
  }>({
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
        ...(input.knownProfiles === undefined ? {} : { knownProfiles: input.knownProfiles }),
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
        true,
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
    unobservedStatus: (object, failure, now) =>
      unobservedCapiOwnedStatus(contract.status, object, failure, now),
  };
}
