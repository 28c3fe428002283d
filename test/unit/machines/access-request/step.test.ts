/** The AccessRequest step: responsibility, status, finalizer order (path coverage: shared/path-coverage.test.ts). */

import { describe, expect, it } from "vitest";
import type { AccessRequest } from "../../../../src/api/access-request.ts";
import {
  ACCESS_REQUEST_ANNOTATIONS,
  ACCESS_REQUEST_FINALIZERS,
  ACCESS_REQUEST_LABELS,
} from "../../../../src/api/constants/access-request.ts";
import { LABELS } from "../../../../src/api/constants.ts";
import type { AccessFacts } from "../../../../src/machines/access-request/machine.ts";
import {
  accessResponsibility,
  accessStateOf,
  MISSING_ROLE_POLLS,
} from "../../../../src/machines/access-request/step.ts";
import { applied } from "../../../../src/machines/shared/json-patch.ts";
import { accessFactsWith } from "../../../support/access-fixtures.ts";
import { anAccessRequest, stored } from "../../../support/builders.ts";
import { expectCondition } from "../../../support/conditions.ts";
import { stepAccessWrites } from "../../../support/step-writes.ts";

const facts = accessFactsWith;

/** Request team/reader for token access, prepared (labelled) and stored; `overrides` replace metadata fields. */
function aRequest(
  overrides: Partial<AccessRequest["metadata"]> = {},
  status?: AccessRequest["status"],
): AccessRequest {
  const request = stored(
    anAccessRequest({
      name: "reader",
      namespace: "team",
      labels: { [LABELS.provider]: "eng", [ACCESS_REQUEST_LABELS.profile]: "p" },
      clusterRef: { name: "c", namespace: "team" },
      token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }] },
      ...(status ? { status } : {}),
    }),
    { uid: "uid-1", resourceVersion: "7" },
  );
  return { ...request, metadata: { ...request.metadata, ...overrides } };
}

const step = (request: AccessRequest, f: AccessFacts) =>
  stepAccessWrites({ request, facts: f, secretName: "reader.kubeconfig", now: "2026-11-21T10:00:00Z" });

describe("stepAccessRequest", () => {
  it("annotates a Granted request with the Cluster's URL from the host when one is given, and drops it otherwise", () => {
    const pending = aRequest(
      { finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest] },
      { observedGeneration: 1, phase: "Pending" },
    );
    const inPlace = facts({ hasFinalizer: true, accessInPlace: true, secretValid: true, accessGone: false });
    const url = "https://127.0.0.1:40001";
    const withUrl = (request: AccessRequest) =>
      stepAccessWrites({
        request,
        facts: inPlace,
        secretName: "reader.kubeconfig",
        now: "2026-11-21T10:00:00Z",
        localAccess: url,
      });
    const granted = withUrl(pending);
    expect(granted.state).toBe("granted");
    const annotated = applied(pending, [...granted.metadataPatch, ...granted.statusPatch]);
    expect(annotated.metadata.annotations?.[ACCESS_REQUEST_ANNOTATIONS.localAccess]).toBe(url);
    expect(withUrl(annotated).metadataPatch).toEqual([]); // at rest: no write
    // Without one (the Cluster publishes no internal endpoint), the annotation goes.
    const dropped = applied(annotated, [...step(annotated, inPlace).metadataPatch]);
    expect(dropped.metadata.annotations?.[ACCESS_REQUEST_ANNOTATIONS.localAccess]).toBeUndefined();
    // Not Granted: none.
    const pendingStep = stepAccessWrites({
      request: aRequest(),
      facts: facts(),
      secretName: "reader.kubeconfig",
      now: "2026-11-21T10:00:00Z",
      localAccess: url,
    });
    expect(pendingStep.state).toBe("provisioning");
    expect(JSON.stringify(pendingStep.metadataPatch)).not.toContain("local-access");
  });

  it("adds the finalizer and orders grant and credential in the same step, while Pending", () => {
    const result = step(aRequest(), facts());
    expect(result.state).toBe("provisioning");
    expect(result.commands).toEqual(["grantAccess", "issueCredential"]);
    expect(result.metadataPatch).toContainEqual({
      op: "add",
      path: "/metadata/finalizers",
      value: [ACCESS_REQUEST_FINALIZERS.accessRequest],
    });
    const next = applied(aRequest(), [...result.statusPatch]);
    expect(next.status).toMatchObject({
      phase: "Pending",
      observedGeneration: 1,
      secretRef: { name: "reader.kubeconfig" },
    });
  });

  it("is Granted once access is in place and the Secret is valid, and renews a stale credential", () => {
    const provisioning = aRequest(
      { finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest] },
      { observedGeneration: 1, phase: "Pending" },
    );
    const granted = step(
      provisioning,
      facts({ hasFinalizer: true, accessInPlace: true, secretValid: true, accessGone: false }),
    );
    expect(granted.state).toBe("granted");
    const stored = applied(provisioning, [...granted.statusPatch]);
    expect(stored.status?.phase).toBe("Granted");
    const renewal = step(
      stored,
      facts({ hasFinalizer: true, accessInPlace: true, secretValid: false, accessGone: false }),
    );
    expect(renewal.state).toBe("granted");
    expect(renewal.commands).toEqual(["issueCredential"]);
    const atRest = step(
      stored,
      facts({ hasFinalizer: true, accessInPlace: true, secretValid: true, accessGone: false }),
    );
    expect(atRest).toMatchObject({ commands: [], statusPatch: [], metadataPatch: [] });
  });

  it("waits for the Cluster without touching anything", () => {
    const result = step(aRequest(), facts({ clusterReachable: false }));
    expect(result).toMatchObject({ state: "pending", commands: [], metadataPatch: [] });
  });

  it("denies with the reason on a condition and a Warning Event", () => {
    const result = step(
      aRequest(),
      facts({ denial: "Role a/b exists and is not managed by this AccessRequest" }),
    );
    expect(result.state).toBe("denied");
    expect(result.events).toContainEqual(expect.objectContaining({ type: "Warning", reason: "Denied" }));
    const next = applied(aRequest(), [...result.statusPatch]);
    expect(next.status?.phase).toBe("Denied");
    expectCondition(next, { type: "AccessGranted", reason: "Denied" });
  });

  it("revokes on deletion and lets go of the finalizer only once nothing is left", () => {
    const deleting = aRequest(
      { finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest], deletionTimestamp: "2026-11-21T10:00:00Z" },
      { observedGeneration: 1, phase: "Granted" },
    );
    expect(accessStateOf(deleting)).toBe("deleting.revoking");
    const first = step(deleting, facts({ deleting: true, hasFinalizer: true, accessGone: false }));
    expect(first.commands).toEqual(["revokeAccess"]);
    expect(first.metadataPatch).toEqual([]);
    const done = step(deleting, facts({ deleting: true, hasFinalizer: true, accessGone: true }));
    expect(done.state).toBe("deleting.released");
    expect(done.metadataPatch).toContainEqual({ op: "remove", path: "/metadata/finalizers/0" });
  });
});

describe("referenced roles", () => {
  const withRoleRef = (status?: AccessRequest["status"]): AccessRequest => {
    const request = aRequest({ finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest] }, status);
    const token = { roleRefs: [{ kind: "ClusterRole" as const, name: "later" }] };
    return { ...request, spec: { clusterRef: { name: "c", namespace: "team" }, token } };
  };
  const grantedFacts = (missingRoles: string[]) =>
    facts({ hasFinalizer: true, accessInPlace: true, secretValid: true, accessGone: false, missingRoles });
  const timing = { tokenValidityMs: 600_000, pollMs: 1_000, retryMs: 1_000, resyncMs: 300_000 };
  const stepTimed = (request: AccessRequest, f: AccessFacts) =>
    stepAccessWrites({ request, facts: f, secretName: "r", now: "2026-11-21T10:00:00Z", timing });

  it("grants with ReferencedRolesExist False and a Warning while one is missing, looking again soon", () => {
    const request = withRoleRef({ observedGeneration: 1, phase: "Pending" });
    const result = stepTimed(
      request,
      grantedFacts(["ClusterRole later (bound by token.roleRefs[0]) does not exist"]),
    );
    expect(result.state).toBe("granted");
    const message =
      "ClusterRole later (bound by token.roleRefs[0]) does not exist: a binding to a missing role grants nothing until the role exists";
    expect(result.events).toContainEqual({ type: "Warning", reason: "RoleMissing", message });
    expect(result.requeueAfterMs).toBe(timing.pollMs * MISSING_ROLE_POLLS);
    const stored = applied(request, [...result.statusPatch]);
    expectCondition(stored, {
      type: "ReferencedRolesExist",
      status: "False",
      reason: "RoleMissing",
      message,
    });
    // Told once: the next look with the same role missing writes nothing and records no Warning.
    const again = stepTimed(
      stored,
      grantedFacts(["ClusterRole later (bound by token.roleRefs[0]) does not exist"]),
    );
    expect(again.statusPatch).toEqual([]);
    expect(again.events.filter((e) => e.reason === "RoleMissing")).toEqual([]);
    // Once the role exists: True, a Normal Event, and the usual resync.
    const found = stepTimed(stored, grantedFacts([]));
    expect(found.events).toContainEqual(expect.objectContaining({ type: "Normal", reason: "RolesFound" }));
    expect(applied(stored, [...found.statusPatch]).status?.conditions).toContainEqual(
      expect.objectContaining({ type: "ReferencedRolesExist", status: "True", reason: "RolesFound" }),
    );
    expect(found.requeueAfterMs).toBe(timing.resyncMs);
  });

  it("clears a RoleMissing condition left from a spec that no longer references roles", () => {
    const missing = {
      type: "ReferencedRolesExist",
      status: "False" as const,
      reason: "RoleMissing",
      message: "ClusterRole later … does not exist",
      observedGeneration: 1,
      lastTransitionTime: "2026-11-21T09:00:00Z",
    };
    const request = aRequest(
      { finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest] },
      { observedGeneration: 1, phase: "Granted", conditions: [missing] },
    );
    const result = step(request, grantedFacts([]));
    expect(applied(request, [...result.statusPatch]).status?.conditions).toContainEqual(
      expect.objectContaining({
        type: "ReferencedRolesExist",
        status: "True",
        message: "no role is bound by reference",
      }),
    );
  });

  it("says nothing about roles for a request that references none", () => {
    const request = aRequest({}, { observedGeneration: 1, phase: "Pending" });
    const result = step(request, grantedFacts(["never read for a request without references"]));
    expect(applied(request, [...result.statusPatch]).status?.conditions?.map((c) => c.type)).not.toContain(
      "ReferencedRolesExist",
    );
  });
});

describe("accessResponsibility", () => {
  it("follows the reference's rule: both labels, our provider, Pending or Granted for this generation", () => {
    expect(accessResponsibility(aRequest(), "eng")).toBe("ours");
    expect(accessResponsibility(aRequest(), "other")).toBe("notOurs");
    expect(accessResponsibility(aRequest({ labels: { [LABELS.provider]: "eng" } }), "eng")).toBe(
      "notPrepared",
    );
    expect(
      accessResponsibility(aRequest({ generation: 2 }, { observedGeneration: 1, phase: "Granted" }), "eng"),
    ).toBe("awaitingPreparation");
    const leaving = aRequest({
      labels: {},
      finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest],
      deletionTimestamp: "2026-11-21T10:00:00Z",
    });
    expect(accessResponsibility(leaving, "eng")).toBe("ours");
  });
});

describe("a target cluster that fails (refused, unreachable)", () => {
  const refused = {
    reason: "TargetRefused",
    message:
      'the API server of Cluster team/c refused the backend\'s admin access: 403 Forbidden: serviceaccounts is forbidden: User "system:serviceaccount:t:admin" cannot list resource "serviceaccounts" in API group "" at the cluster scope',
  };
  const timing = { tokenValidityMs: 600_000, pollMs: 1_000, retryMs: 1_000, resyncMs: 60_000 };
  const failingStep = (request: AccessRequest, f: AccessFacts, now = "2026-11-21T10:00:00Z") =>
    stepAccessWrites({
      request,
      facts: f,
      secretName: "reader.kubeconfig",
      now,
      timing,
      targetProblem: refused,
    });

  it("shows the API server's words on a False AccessGranted condition, with a Warning Event, and ClusterReady True", () => {
    const result = failingStep(aRequest(), facts({ clusterReachable: false, targetFailing: true }));
    expect(result).toMatchObject({ state: "pending", commands: [] });
    expect(result.events).toContainEqual({ type: "Warning", ...refused });
    const next = applied(aRequest(), [...result.statusPatch]);
    expect(next.status?.phase).toBe("Pending");
    expectCondition(next, { type: "AccessGranted", status: "False", ...refused });
    expectCondition(next, { type: "ClusterReady", status: "True" });
    // The same refusal again: no second Event, no write.
    const again = failingStep(next, facts({ clusterReachable: false, targetFailing: true }));
    expect(again.events).toEqual([]);
    expect(again.statusPatch).toEqual([]);
  });

  it("records no second Warning for a failed command: the runtime's failure Event tells it", () => {
    const result = stepAccessWrites({
      request: aRequest(),
      facts: facts({ targetFailing: true }),
      secretName: "reader.kubeconfig",
      now: "2026-11-21T10:00:00Z",
      targetProblem: { ...refused, inCommand: true },
    });
    expect(result.events.filter((event) => event.type === "Warning")).toEqual([]);
    expect(applied(aRequest(), [...result.statusPatch]).status?.conditions).toContainEqual(
      expect.objectContaining({ type: "AccessGranted", reason: "TargetRefused" }),
    );
  });

  it("backs off as long as the failure has lasted, between pollMs and resyncMs", () => {
    const first = failingStep(aRequest(), facts({ clusterReachable: false, targetFailing: true }));
    expect(first.requeueAfterMs).toBe(timing.pollMs);
    const stored = applied(aRequest(), [...first.statusPatch]);
    const later = failingStep(
      stored,
      facts({ clusterReachable: false, targetFailing: true }),
      "2026-11-21T10:00:20Z",
    );
    expect(later.requeueAfterMs).toBe(20_000);
    const much = failingStep(
      stored,
      facts({ clusterReachable: false, targetFailing: true }),
      "2026-11-21T11:00:00Z",
    );
    expect(much.requeueAfterMs).toBe(timing.resyncMs);
    // Granted: looked at on the same backoff (sooner than at rest), not only at the next resync.
    const granted = aRequest(
      { finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest] },
      { observedGeneration: 1, phase: "Granted" },
    );
    const atRest = failingStep(
      granted,
      facts({ hasFinalizer: true, clusterReachable: false, targetFailing: true }),
    );
    expect(atRest).toMatchObject({ state: "granted", requeueAfterMs: timing.pollMs });
  });

  it("keeps its finalizer while revoking on a target that fails: what was made there may still be there", () => {
    const leaving = aRequest(
      { finalizers: [ACCESS_REQUEST_FINALIZERS.accessRequest], deletionTimestamp: "2026-11-21T10:00:00Z" },
      { observedGeneration: 1, phase: "Granted" },
    );
    const result = failingStep(
      leaving,
      facts({
        deleting: true,
        hasFinalizer: true,
        clusterReachable: false,
        targetFailing: true,
        accessGone: false,
      }),
    );
    expect(result.state).toBe("deleting.revoking");
    expect(result.metadataPatch).toEqual([]);
    const gone = step(
      leaving,
      facts({ deleting: true, hasFinalizer: true, clusterReachable: false, accessGone: false }),
    );
    expect(gone.state).toBe("deleting.released");
  });
});

describe("a denial with its own reason", () => {
  it("shows OutsideAdminScope on the condition and the Warning Event", () => {
    const denial = "the backend's admin access to this Cluster is limited to namespace(s) t";
    const result = step(aRequest(), facts({ denial, denialReason: "OutsideAdminScope" }));
    expect(result.state).toBe("denied");
    expect(result.events).toContainEqual({
      type: "Warning",
      reason: "OutsideAdminScope",
      message: `Access denied: ${denial}`,
    });
    const next = applied(aRequest(), [...result.statusPatch]);
    expectCondition(next, {
      type: "AccessGranted",
      status: "False",
      reason: "OutsideAdminScope",
      message: denial,
    });
  });
});
