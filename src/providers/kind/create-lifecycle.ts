/**
 * The life of a kind cluster's create as decisions over what the backend observed: where a create is (waiting
 * in line for a slot, running, failed and to be tried again, …), what a `create` call does next (start, try
 * again, adopt, refuse), what `observe` reports meanwhile, and what a delete stops. No I/O: the backend looks,
 * these decide, the backend acts.
 */
import type { ClusterObservation } from "../../api/backend.ts";
import type { MetallbState } from "./metallb.ts";
import type { Detached, KindRecord } from "./state-folder.ts";

/**
 * How often a failed `kind create cluster` is tried, the leftovers removed in between: kubeadm gives up on a
 * control plane that is slow to come up on a busy host, which the next try usually gets past.
 */
export const CREATE_ATTEMPTS = 4;

/** Where a cluster's `kind create cluster` is. */
export type CreateState =
  /** Waiting in this instance for a create slot. */
  | { readonly kind: "queued" }
  | { readonly kind: "running" }
  | { readonly kind: "succeeded" }
  /** Failed, with tries left: reported absent, so the engine orders it again, and that create tries again. */
  | { readonly kind: "retry"; readonly message: string }
  /** It failed with tries left, and waits before the next (the backend's `retryDelayMs`, doubled each time). */
  | { readonly kind: "backoff"; readonly message: string; readonly retryAt: number }
  | { readonly kind: "failed"; readonly message: string }
  /** Its process went with no exit status (killed with its Pod, or the machine restarted): at most half a cluster. */
  | { readonly kind: "interrupted" };

/** What the backend sees of one create. */
export interface CreateSeen {
  readonly record: Pick<KindRecord, "adopted" | "queued" | "attempt">;
  /** Whether this instance holds it in its line for a slot. */
  readonly inLine: boolean;
  /** Its exit status; `running` while its wrapper runs; undefined when it went with none. */
  readonly exit: string | undefined;
  /** When it ended (epoch ms). */
  readonly exitedAt: number;
  /** What it said on stderr, in one line; read only for a failed create. */
  readonly stderr: () => string;
}

/** Where the create is, `now`, with `retryDelayMs` before the first try again. */
export function createStateOf(seen: CreateSeen, now: number, retryDelayMs: number): CreateState {
  const { record, exit } = seen;
  if (record.adopted) return { kind: "succeeded" };
  // Queued by an instance that is gone (e.g. the engine restarted): nothing started; the engine orders it again.
  if (record.queued) return seen.inLine ? { kind: "queued" } : { kind: "interrupted" };
  if (exit === "running") return { kind: "running" };
  if (exit === "0") return { kind: "succeeded" };
  if (exit === undefined) return { kind: "interrupted" };
  const stderr = seen.stderr();
  const attempt = record.attempt ?? 1;
  const failure = `kind create cluster exited with ${exit}${stderr ? `: ${stderr}` : ""}`;
  if (attempt < CREATE_ATTEMPTS) {
    const retryAt = seen.exitedAt + retryDelayMs * 2 ** (attempt - 1);
    return retryAt > now
      ? { kind: "backoff", message: failure, retryAt }
      : { kind: "retry", message: failure };
  }
  return {
    kind: "failed",
    message: `${failure} (try ${attempt} of ${CREATE_ATTEMPTS}); delete the Cluster to clean up, then create it again`,
  };
}

/** What a `create` call knows when it decides. */
export interface CreateCall {
  /** This backend's record of the cluster, and where its create is; both absent when there is none. */
  readonly record?: Pick<KindRecord, "attempt">;
  readonly state?: CreateState;
  /** Whether kind lists the cluster; absent until looked at. */
  readonly listed?: boolean;
  /** Whether the Cluster names this kind cluster by annotation (one that runs is adopted). */
  readonly named: boolean;
}

/** What a `create` call does next. */
export type CreateStep =
  /** Ask kind whether the cluster exists, then decide again. */
  | { readonly kind: "look" }
  /** Start a create (or queue it for a slot), first removing what a failed or interrupted one left. */
  | {
      readonly kind: "start";
      readonly attempt: number;
      readonly lastFailure?: string;
      readonly leftovers?: "failed" | "interrupted";
    }
  /** Nothing: it is queued, running, waits to try again, or failed until deleted. */
  | { readonly kind: "wait" }
  /** It exists and is ours: make what is missing (MetalLB), if anything. */
  | { readonly kind: "complete" }
  /** It runs, unmade by us, under the name the Cluster gives: describe it. */
  | { readonly kind: "adopt" }
  /** It runs, unmade by us, and no Cluster claims it: touch nothing. */
  | { readonly kind: "refuse" };

export function nextCreateStep(call: CreateCall): CreateStep {
  const { record, state } = call;
  const attempt = record?.attempt ?? 1;
  // Its process died with it (e.g. the engine's Pod went mid-create), or it failed with tries left.
  if (state?.kind === "interrupted") return { kind: "start", attempt, leftovers: "interrupted" };
  if (state?.kind === "retry")
    return { kind: "start", attempt: attempt + 1, lastFailure: state.message, leftovers: "failed" };
  if (state && state.kind !== "succeeded") return { kind: "wait" };
  if (call.listed === undefined) return { kind: "look" };
  if (call.listed && record) return { kind: "complete" }; // one cluster per Cluster
  if (call.listed) return call.named ? { kind: "adopt" } : { kind: "refuse" };
  return { kind: "start", attempt: 1 };
}

/** Whether a create may start now: a slot is free, and `ahead` creates wait before it (none may). */
export function mayStartCreate(ahead: number, running: number, parallelCreates: number): boolean {
  return ahead === 0 && running < parallelCreates;
}

/** The line of creates waiting for a slot, as one of them sees it. */
export interface LineView {
  /** Its place, from 1. */
  readonly position: number;
  readonly waiting: number;
  readonly parallelCreates: number;
}

/** What `observe` reports for a record: it exists, at the record's version. */
export function recordedCluster(record: Pick<KindRecord, "cluster" | "version" | "image">) {
  return {
    exists: true as const,
    version: record.version,
    info: `kind cluster ${record.cluster} (${record.image})`,
  };
}

/**
 * What `observe` reports while the create has not succeeded; undefined once it has (then what kind says
 * decides). What a failed or interrupted create left is no cluster yet: reported absent, the engine orders
 * one again, and that create starts over.
 */
export function creatingObservation(
  state: CreateState,
  record: Pick<KindRecord, "cluster" | "version" | "image" | "attempt" | "lastFailure">,
  now: number,
  line: () => LineView,
): ClusterObservation | undefined {
  const known = recordedCluster(record);
  switch (state.kind) {
    case "interrupted":
    case "retry":
      return { exists: false };
    case "running": {
      const retrying = record.lastFailure
        ? { message: `try ${record.attempt} of ${CREATE_ATTEMPTS}; the last failed: ${record.lastFailure}` }
        : {};
      return { ...known, phase: "provisioning", ...retrying };
    }
    case "backoff": {
      const seconds = Math.max(1, Math.ceil((state.retryAt - now) / 1000));
      const message = `try ${record.attempt ?? 1} of ${CREATE_ATTEMPTS} failed, trying again in ${seconds} s: ${state.message}`;
      return { ...known, phase: "provisioning", message };
    }
    case "queued": {
      const { position, waiting, parallelCreates } = line();
      const message = `waiting to start: ${parallelCreates} kind create(s) run at once on this Docker host (backend option parallelCreates), ${position} of ${waiting} waiting`;
      return { ...known, phase: "provisioning", message };
    }
    case "failed":
      return { ...known, phase: "failed", message: state.message };
    case "succeeded":
      return undefined;
  }
}

/** What deleting a cluster does: forget one it adopted, or stop what runs for it and remove it. */
export type DeletePlan = { readonly kind: "forget" } | { readonly kind: "remove"; readonly stop: Detached[] };

export function deletePlan(
  record: Pick<KindRecord, "adopted"> | undefined,
  create: CreateState | undefined,
  metallb: MetallbState,
): DeletePlan {
  // Not ours to remove: the Cluster only described it. Forgetting it is its deletion here.
  if (record?.adopted) return { kind: "forget" };
  const stop: Detached[] = [];
  if (create?.kind === "running") stop.push("create");
  if (metallb.kind === "running") stop.push("metallb");
  return { kind: "remove", stop };
}
