/**
 * What the steps of the kinds Cluster API owns (EngineCluster, EngineControlPlane) share: the publishing
 * commands, the state they store, the endpoints they publish, their backend orders, the provider label
 * and the step of a paused object.
 */

import type { Draft } from "immer";
import type { ApiEndpoint } from "../../api/cluster-api.ts";
import type { ObjectMeta } from "../../api/common.ts";
import { LABELS } from "../../api/constants.ts";
import type { FinalizerWish } from "../shared/finalizer.ts";
import type { ActionContext } from "../shared/kind-step.ts";
import type { MachineStep } from "../shared/machine-step.ts";
import { apiEndpointOf, type BackendClusterFacts, type BackendOrder } from "./backend-cluster.ts";
import type { CapiOwnedFacts } from "./capi-owned-states.ts";

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

type SharedAction<Command> = (
  params: Readonly<Record<string, unknown>> | undefined,
  context: ActionContext<unknown, CapiOwnedFacts>,
) => Command | undefined;

/** What the actions every CAPI-owned kind has (but `publish`) order. */
export const capiOwnedCommands: {
  readonly createCluster: SharedAction<BackendOrder>;
  readonly deleteCluster: SharedAction<BackendOrder>;
  readonly unpublish: SharedAction<PublicationCommand>;
} = {
  // Only what the backend does not hold yet: after a restart mid-provisioning, the cluster is adopted.
  createCluster: (params, { facts }) =>
    typeof params?.version === "string" && !facts.backend.exists
      ? { kind: "create", version: params.version }
      : undefined,
  deleteCluster: () => ({ kind: "delete" }),
  unpublish: (_, { facts }) => ({ kind: "unpublish", capiCluster: facts.owner }),
};

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
export function pausedStep<Metadata, Status, Command>(
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
