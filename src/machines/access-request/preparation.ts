/** Preparation of AccessRequests (the openMCP operator's generic duty), as a pure function of what was resolved. */

import { produce } from "immer";
import type { AccessRequest } from "../../api/access-request.ts";
import type { ObjectReference } from "../../api/common.ts";
import { ACCESS_REQUEST_LABELS, ACCESS_REQUEST_REASONS } from "../../api/constants/access-request.ts";
import { LABELS, REQUEST_PHASES } from "../../api/constants.ts";
import { parseDuration } from "../../api/duration.ts";
import { mergeConditions } from "../shared/conditions.ts";
import { diff, type Json, type PatchOperation } from "../shared/json-patch.ts";
import { rfc3339 } from "../shared/rfc3339.ts";

/** What following the request's references found. */
export type Resolution =
  | {
      readonly kind: "resolved";
      readonly cluster: ObjectReference;
      readonly profile: string;
      readonly provider: string;
    }
  | { readonly kind: "unresolved"; readonly message: string };

/** What preparation does with one request. */
export interface PreparationResult {
  /** Operations on metadata and spec (labels, clusterRef); never overwriting a value already set. */
  readonly objectPatch: readonly PatchOperation[];
  readonly statusPatch: readonly PatchOperation[];
  /** The request's ttl has passed: delete it. */
  readonly expired: boolean;
  /** Look again after this long (ttl deadline, or retry of an unresolved reference). */
  readonly requeueAfterMs: number | undefined;
}

/** Condition type preparation writes. */
export const PREPARED_CONDITION = "Prepared";

/** Whether the request still needs its labels (and possibly its clusterRef). */
export function needsPreparation(request: AccessRequest): boolean {
  const labels = request.metadata.labels ?? {};
  return !labels[LABELS.provider] || !labels[ACCESS_REQUEST_LABELS.profile];
}

/**
 * Flow: ttl first (an expired request is deleted, whatever else); then, for an unprepared request, add
 * the provider and profile labels and the clusterRef from the resolution and set it Pending; for a
 * prepared one that was Granted for an older generation, set it back to Pending so it is granted anew; and a
 * prepared one whose Prepared condition was never written (its status write lost a race) gets it.
 */
export function prepareAccessRequest(
  request: AccessRequest,
  resolution: Resolution | undefined,
  nowMs: number,
  retryMs: number,
): PreparationResult {
  const ttlMs = request.spec.ttl ? parseDuration(request.spec.ttl) : undefined;
  const created = request.metadata.creationTimestamp ? Date.parse(request.metadata.creationTimestamp) : nowMs;
  const deadline = ttlMs === undefined ? undefined : created + ttlMs;
  if (deadline !== undefined && nowMs >= deadline) {
    return { objectPatch: [], statusPatch: [], expired: true, requeueAfterMs: undefined };
  }
  const at: PreparationMoment = {
    now: rfc3339(nowMs),
    generation: request.metadata.generation ?? 0,
    untilDeadline: deadline === undefined ? undefined : deadline - nowMs,
  };
  if (!needsPreparation(request)) return preparedAlready(request, resolution, at);
  if (!resolution || resolution.kind === "unresolved") return unresolved(request, resolution, at, retryMs);
  return prepared(request, resolution, at);
}

/** When a preparation step runs: its time, the request's generation, and how long until its ttl ends. */
interface PreparationMoment {
  readonly now: string;
  readonly generation: number;
  readonly untilDeadline: number | undefined;
}

/**
 * A request prepared before: Granted for an older generation, set back to Pending; labelled as preparation labels it
 * but its Prepared condition not said (its status write lost to the request's machine writing first, or an engine
 * stopped between the two writes), said now, merged into the status as it is. Labels naming another provider or
 * profile are another's preparation (the openMCP operator's): left alone.
 */
function preparedAlready(
  request: AccessRequest,
  resolution: Resolution | undefined,
  at: PreparationMoment,
): PreparationResult {
  const stale =
    request.status?.phase === REQUEST_PHASES.granted && request.status.observedGeneration !== at.generation;
  const restarted = stale ? { ...request.status, phase: REQUEST_PHASES.pending } : request.status;
  const labels = request.metadata.labels ?? {};
  const unsaid =
    resolution?.kind === "resolved" &&
    labels[LABELS.provider] === resolution.provider &&
    labels[ACCESS_REQUEST_LABELS.profile] === resolution.profile &&
    !request.status?.conditions?.some((c) => c.type === PREPARED_CONDITION && c.status === "True");
  const status = unsaid
    ? {
        ...restarted,
        conditions: mergeConditions(
          request.status?.conditions,
          [preparedCondition(resolution)],
          at.generation,
          at.now,
        ),
      }
    : restarted;
  return {
    objectPatch: [],
    statusPatch: statusOperations(request, status),
    expired: false,
    requeueAfterMs: at.untilDeadline,
  };
}

/** References that do not resolve (yet): Pending, Prepared False with why, looked at again after `retryMs`. */
function unresolved(
  request: AccessRequest,
  resolution: Extract<Resolution, { kind: "unresolved" }> | undefined,
  at: PreparationMoment,
  retryMs: number,
): PreparationResult {
  const message = resolution?.message ?? "spec.clusterRef or spec.requestRef is needed";
  const conditions = mergeConditions(
    request.status?.conditions,
    [
      {
        type: PREPARED_CONDITION,
        status: "False",
        reason: ACCESS_REQUEST_REASONS.InvalidReference,
        message: `${message} (retrying)`,
      },
    ],
    at.generation,
    at.now,
  );
  const status = {
    ...request.status,
    observedGeneration: at.generation,
    phase: REQUEST_PHASES.pending,
    conditions,
  };
  return {
    objectPatch: [],
    statusPatch: statusOperations(request, status),
    expired: false,
    requeueAfterMs: Math.min(retryMs, at.untilDeadline ?? retryMs),
  };
}

/** Resolved: the provider and profile labels and the clusterRef written (never over a value there), Pending. */
function prepared(
  request: AccessRequest,
  resolution: Extract<Resolution, { kind: "resolved" }>,
  at: PreparationMoment,
): PreparationResult {
  const labelled = produce(request, (draft) => {
    draft.metadata.labels ??= {};
    const labels = draft.metadata.labels as Record<string, string>;
    labels[LABELS.provider] ??= resolution.provider; // never overwrite a value already there
    labels[ACCESS_REQUEST_LABELS.profile] ??= resolution.profile;
    const spec = draft.spec as { clusterRef?: ObjectReference };
    spec.clusterRef ??= { ...resolution.cluster };
  });
  const conditions = mergeConditions(
    request.status?.conditions,
    [preparedCondition(resolution)],
    at.generation,
    at.now,
  );
  return {
    objectPatch: diff(
      { metadata: request.metadata as Json, spec: request.spec as unknown as Json },
      { metadata: labelled.metadata as Json, spec: labelled.spec as unknown as Json },
    ),
    statusPatch: statusOperations(request, {
      ...request.status,
      observedGeneration: at.generation,
      phase: REQUEST_PHASES.pending,
      conditions,
    }),
    expired: false,
    requeueAfterMs: at.untilDeadline,
  };
}

/** The Prepared condition of a request whose references resolved. */
function preparedCondition(resolution: Extract<Resolution, { kind: "resolved" }>) {
  return {
    type: PREPARED_CONDITION,
    status: "True" as const,
    reason: "Prepared",
    message: `Cluster ${resolution.cluster.namespace}/${resolution.cluster.name}, profile ${resolution.profile}, provider ${resolution.provider}`,
  };
}

function statusOperations(request: AccessRequest, status: unknown): PatchOperation[] {
  if (status === undefined) return [];
  return diff(request.status === undefined ? {} : { status: request.status as unknown as Json }, {
    status: status as Json,
  });
}
