/** Preparation: labels and clusterRef added (never overwritten), unresolved references reported, ttl, re-grants. */
import { describe, expect, it } from "vitest";
import type { AccessRequest } from "../../../../src/api/access-request.ts";
import { ACCESS_REQUEST_LABELS } from "../../../../src/api/constants/access-request.ts";
import { LABELS } from "../../../../src/api/constants.ts";
import { prepareAccessRequest } from "../../../../src/machines/access-request/preparation.ts";
import { applied } from "../../../../src/machines/shared/json-patch.ts";
import { type AccessRequestProps, anAccessRequest, stored } from "../../../support/builders.ts";
import { expectCondition } from "../../../support/conditions.ts";

const created = Date.parse("2026-11-21T10:00:00Z");
const resolved = {
  kind: "resolved",
  cluster: { name: "c", namespace: "clusters" },
  profile: "dev.p.small",
  provider: "p",
} as const;

/** Request team/r for token access, referring to ClusterRequest team/req, stored at `created`. */
function aRequest(
  spec: Partial<AccessRequest["spec"]> = {},
  labels?: Record<string, string>,
  status?: AccessRequest["status"],
): AccessRequest {
  return stored(
    anAccessRequest({
      name: "r",
      namespace: "team",
      ...(labels ? { labels } : {}),
      ...(status ? { status } : {}),
      requestRef: { name: "req", namespace: "team" },
      token: { permissions: [] },
      ...spec,
    } as AccessRequestProps),
    { uid: "u", resourceVersion: undefined, creationTimestamp: "2026-11-21T10:00:00Z" },
  );
}

describe("prepareAccessRequest", () => {
  it("adds both labels and the clusterRef, and sets it Pending", () => {
    const request = aRequest();
    const result = prepareAccessRequest(request, resolved, created, 10_000);
    const next = applied(applied(request, [...result.objectPatch]), [...result.statusPatch]);
    expect(next.metadata.labels).toEqual({
      [LABELS.provider]: "p",
      [ACCESS_REQUEST_LABELS.profile]: "dev.p.small",
    });
    expect(next.spec.clusterRef).toEqual({ name: "c", namespace: "clusters" });
    expect(next.status?.phase).toBe("Pending");
    expectCondition(next, { type: "Prepared", status: "True" });
  });

  it("never overwrites a label that is already there", () => {
    const request = aRequest({}, { [LABELS.provider]: "someone" });
    const next = applied(request, [...prepareAccessRequest(request, resolved, created, 10_000).objectPatch]);
    expect(next.metadata.labels?.[LABELS.provider]).toBe("someone");
    expect(next.metadata.labels?.[ACCESS_REQUEST_LABELS.profile]).toBe("dev.p.small");
  });

  it("reports an unresolved reference on a condition and retries", () => {
    const request = aRequest();
    const result = prepareAccessRequest(
      request,
      { kind: "unresolved", message: "ClusterRequest team/req is not Granted yet" },
      created,
      10_000,
    );
    expect(result.objectPatch).toEqual([]);
    expect(result.requeueAfterMs).toBe(10_000);
    const next = applied(request, [...result.statusPatch]);
    expectCondition(next, {
      type: "Prepared",
      status: "False",
      reason: "InvalidReference",
      message: "ClusterRequest team/req is not Granted yet (retrying)",
    });
  });

  it("deletes the request once its ttl has passed, and wakes up for that moment before", () => {
    const request = aRequest({ ttl: "1h30m" });
    expect(prepareAccessRequest(request, resolved, created + 60_000, 10_000).requeueAfterMs).toBe(
      89 * 60_000,
    );
    expect(prepareAccessRequest(request, resolved, created + 90 * 60_000, 10_000).expired).toBe(true);
  });

  it("says Prepared for a labelled request whose condition was lost, merged into its status as the machine left it", () => {
    const labels = { [LABELS.provider]: "p", [ACCESS_REQUEST_LABELS.profile]: "dev.p.small" };
    // Preparation's labels written; its status write lost to the machine's, which answered first.
    const denied = {
      observedGeneration: 1,
      phase: "Denied" as const,
      conditions: [
        {
          type: "Granted",
          status: "False" as const,
          reason: "NoAdminAccess",
          message: "no admin access",
          lastTransitionTime: "2026-11-21T10:00:01Z",
          observedGeneration: 1,
        },
      ],
    };
    const request = aRequest({ clusterRef: { name: "c", namespace: "clusters" } }, labels, denied);
    const result = prepareAccessRequest(request, resolved, created, 10_000);
    expect(result.objectPatch).toEqual([]);
    const next = applied(request, [...result.statusPatch]);
    expect(next.status?.phase).toBe("Denied");
    expect(next.status?.conditions?.[0]).toEqual(denied.conditions[0]);
    expectCondition(next, {
      type: "Prepared",
      status: "True",
      reason: "Prepared",
      message: "Cluster clusters/c, profile dev.p.small, provider p",
    });
    // Said once: the next look writes nothing.
    expect(prepareAccessRequest(next, resolved, created, 10_000).statusPatch).toEqual([]);
    // Labels of another's preparation (another provider or profile) are left as they are, and so is its status.
    const others = aRequest(
      {},
      { [LABELS.provider]: "another", [ACCESS_REQUEST_LABELS.profile]: "x.another.y" },
      denied,
    );
    expect(prepareAccessRequest(others, resolved, created, 10_000).statusPatch).toEqual([]);
    // A reference that no longer resolves says nothing new about a labelled request.
    expect(
      prepareAccessRequest(request, { kind: "unresolved", message: "gone" }, created, 10_000).statusPatch,
    ).toEqual([]);
  });

  it("sets a request changed after it was granted back to Pending, so it is granted anew", () => {
    const labels = { [LABELS.provider]: "p", [ACCESS_REQUEST_LABELS.profile]: "dev.p.small" };
    const request = {
      ...aRequest({}, labels, { observedGeneration: 1, phase: "Granted" }),
      metadata: { ...aRequest({}, labels).metadata, generation: 2 },
    };
    const next = applied(request, [...prepareAccessRequest(request, undefined, created, 10_000).statusPatch]);
    expect(next.status?.phase).toBe("Pending");
    const current = aRequest({}, labels, { observedGeneration: 1, phase: "Granted" });
    expect(prepareAccessRequest(current, undefined, created, 10_000).statusPatch).toEqual([]);
  });
});
