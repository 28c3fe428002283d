/** The Warning Event of a cluster that failed: a refused version, or what the backend says. */
import type { ClusterObservation } from "../../api/backend.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import type { VersionResolution } from "./kubernetes-version.ts";

/** What a failed Cluster or EngineCluster tells a person, from its facts. */
export function failureEvent(facts: {
  readonly version: VersionResolution | undefined;
  readonly backend: ClusterObservation;
}): EventRecord {
  return {
    type: "Warning",
    reason: facts.version?.kind === "downgrade" ? "DowngradeNotAllowed" : "Failed",
    message:
      facts.version && facts.version.kind !== "accepted"
        ? facts.version.message
        : facts.backend.exists
          ? (facts.backend.message ?? "the backend reports the cluster failed")
          : "the cluster failed",
  };
}
