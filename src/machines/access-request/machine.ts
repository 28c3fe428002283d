/** The AccessRequest statechart: Pending → Provisioning → Granted, Denied, Deleting. Pure: no I/O, no clock. */
import { setup } from "xstate";
import { REQUEST_PHASES } from "../../api/constants.ts";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import { type DeletionFacts, deletionGuards } from "../shared/finalizer.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";

/**
 * What one reconcile knows about an AccessRequest, its Cluster and the target cluster, level-based (while our
 * finalizer is on the request, access objects may exist on the target cluster).
 */
export interface AccessFacts extends DeletionFacts {
  /** The target Cluster exists, is Ready, the backend gives admin access to it, and its API server answered the reads. */
  readonly clusterReachable: boolean;
  /**
   * A call on the target's API server failed (refused, unreachable) although its Cluster is Ready: what was
   * made there may still be there, so nothing is let go on that account.
   */
  readonly targetFailing: boolean;
  /** Why the request cannot be served (conflicting role, no OIDC, invalid rules); undefined if it can. */
  readonly denial: string | undefined;
  /** The condition's reason for the denial when it is not plain `Denied` (e.g. `OutsideAdminScope`). */
  readonly denialReason?: string;
  /** Every object the request needs exists on the target cluster as desired. */
  readonly accessInPlace: boolean;
  /** No object of this request is left on the target cluster. */
  readonly accessGone: boolean;
  /** The Secret with the kubeconfig exists, is ours, and its credential is not due for renewal. */
  readonly secretValid: boolean;
  /**
   * Roles the request binds by reference that do not exist on the target (in words): their bindings grant
   * nothing until they do. Not a reason to deny (RBAC allows it, and the role may come later); told on a condition.
   */
  readonly missingRoles: readonly string[];
}

/** The one event: "here is what the world looks like now". */
export type AccessEvent = ObservedEvent<AccessFacts>;

const when = whenObserved<AccessFacts>;

/** Where a request that is not denied yet goes first: deleted, or denied. */
const DELETED_OR_DENIED = [
  { guard: "isBeingDeleted", target: "deleting" },
  { guard: "isDenied", target: "denied" },
] as const;

/** The AccessRequest machine: named guards and actions first, then the chart, which refers to them by name. */
export const accessRequestMachine = setup({
  types: observedMachineTypes<AccessFacts>(),
  guards: {
    ...deletionGuards<AccessFacts>(),
    isDenied: when((facts) => facts.denial !== undefined),
    isServable: when((facts) => facts.denial === undefined),
    canGrant: when((facts) => facts.clusterReachable && facts.denial === undefined),
    accessComplete: when((facts) => facts.accessInPlace && facts.secretValid),
    accessIncomplete: when((facts) => facts.clusterReachable && !facts.accessInPlace),
    /** The credential is due for renewal, or its Secret went missing: issue a new one. */
    secretNeedsRenewal: when((facts) => facts.clusterReachable && facts.accessInPlace && !facts.secretValid),
    /** Nothing of ours is left on the target cluster, or it is gone and took everything with it (not merely failing). */
    nothingLeft: when((facts) => facts.accessGone || (!facts.clusterReachable && !facts.targetFailing)),
  },
  actions: actionsAsData("grantAccess", "issueCredential", "revokeAccess"),
}).createMachine({
  id: "accessRequest",
  context: {},
  initial: "pending",
  states: {
    pending: {
      description: "Waiting for the target Cluster to be Ready and reachable.",
      tags: [REQUEUE.poll, `${PHASE_TAG}${REQUEST_PHASES.pending}`],
      always: [...DELETED_OR_DENIED, { guard: "canGrant", target: "provisioning" }],
    },
    provisioning: {
      description:
        "Finalizer set; ServiceAccount, roles and bindings applied on the target; credential issued.",
      tags: [REQUEUE.poll, `${PHASE_TAG}${REQUEST_PHASES.pending}`],
      entry: [
        "addFinalizer",
        "grantAccess",
        "issueCredential",
        recordEvent({ type: "Normal", reason: "Provisioning", message: "Granting access" }),
      ],
      on: {
        // Still incomplete on a later look (an object was removed, a write failed): apply again.
        observed: { guard: "accessIncomplete", target: "provisioning", reenter: true },
      },
      always: [...DELETED_OR_DENIED, { guard: "accessComplete", target: "granted" }],
    },
    granted: {
      description: "Access is in place and the Secret holds a valid kubeconfig.",
      tags: [REQUEUE.resync, `${PHASE_TAG}${REQUEST_PHASES.granted}`],
      entry: [recordEvent({ type: "Normal", reason: "Granted", message: "Access granted" })],
      on: {
        observed: {
          guard: "secretNeedsRenewal",
          actions: [
            "issueCredential",
            recordEvent({ type: "Normal", reason: "Renewed", message: "Credential renewed" }),
          ],
        },
      },
      always: [...DELETED_OR_DENIED, { guard: "accessIncomplete", target: "provisioning" }],
    },
    denied: {
      description: "The request cannot be served as asked; a person must change it.",
      // A conflicting Role on the target is not watched: look again now and then.
      tags: [REQUEUE.retry, `${PHASE_TAG}${REQUEST_PHASES.denied}`],
      entry: [recordEvent({ type: "Warning", reason: "Denied", message: "Access denied" })],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "isServable", target: "pending" },
      ],
    },
    deleting: {
      description: "Deletion requested: remove everything made for the request, then let go.",
      initial: "revoking",
      states: {
        revoking: {
          description: "Deleting the ServiceAccount, roles and bindings made for the request on the target.",
          tags: [REQUEUE.poll],
          always: [{ guard: "withoutOurFinalizer", target: "released" }],
          entry: ["revokeAccess"],
          on: {
            observed: [
              { guard: "nothingLeft", target: "released" },
              { target: "revoking", reenter: true },
            ],
          },
        },
        released: {
          description: "Nothing is left on the target cluster; our finalizer goes.",
          type: "final",
          entry: ["removeFinalizer"],
        },
      },
    },
  },
});
