/**
 * What a ClusterRequest wishes for, beyond openMCP's `purpose`: its purposes' Purpose resources and its
 * own annotations (`engine.openmcp.cloud/{purposes,dedicated,traits}`), aggregated as the design record says.
 */
import type { ClusterRequest } from "../../api/cluster-request.ts";
import { CLUSTER_REQUEST_ANNOTATIONS } from "../../api/constants/cluster-request.ts";
import { ANNOTATIONS } from "../../api/constants.ts";
import type { PurposeSpec } from "../../api/purpose.ts";
import { aggregateWishes, type SchedulingWishes } from "./purpose-aggregation.ts";
import { parseTraitList } from "./traits.ts";

/** The request's purposes in order: `spec.purpose` first, then those of the purposes annotation. */
export function purposesOf(request: ClusterRequest): string[] {
  const extra = (request.metadata.annotations?.[CLUSTER_REQUEST_ANNOTATIONS.purposes] ?? "")
    .split(",")
    .map((purpose) => purpose.trim())
    .filter((purpose) => purpose !== "");
  return [...new Set([request.spec.purpose, ...extra])];
}

/**
 * The aggregated wishes, or why the request's annotations cannot be read. Purposes without a Purpose
 * resource add nothing (openMCP knows no Purpose resources: a request without them is scheduled as there).
 */
export function requestWishes(
  request: ClusterRequest,
  purposes: ReadonlyMap<string, PurposeSpec>,
): SchedulingWishes | { problem: string } {
  const annotations = request.metadata.annotations ?? {};
  const dedicatedText = annotations[CLUSTER_REQUEST_ANNOTATIONS.dedicated];
  if (dedicatedText !== undefined && dedicatedText !== "true" && dedicatedText !== "false") {
    return {
      problem: `annotation ${CLUSTER_REQUEST_ANNOTATIONS.dedicated} must be "true" or "false", not "${dedicatedText}"`,
    };
  }
  const traits = parseTraitList(annotations[ANNOTATIONS.traits] ?? "");
  if ("problem" in traits) return { problem: `annotation ${ANNOTATIONS.traits}: ${traits.problem}` };
  const specs = purposesOf(request).flatMap((name) => {
    const spec = purposes.get(name);
    return spec ? [spec] : [];
  });
  return aggregateWishes(specs, {
    ...(dedicatedText === undefined ? {} : { dedicated: dedicatedText === "true" }),
    traits: traits.wishes,
  });
}
