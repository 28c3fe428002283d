/** Explanations of AccessRequests as preparation and the pure step leave them: each situation in words. */

import { describe, expect, it } from "vitest";
import type { AccessRequest } from "../../../../src/api/access-request.ts";
import { ACCESS_REQUEST_FINALIZERS } from "../../../../src/api/constants/access-request.ts";
import {
  ACCESS_REQUEST_GUARD_PHRASES,
  explainAccessRequest,
} from "../../../../src/machines/access-request/explain.ts";
import { type AccessFacts, accessRequestMachine } from "../../../../src/machines/access-request/machine.ts";
import {
  prepareAccessRequest,
  type Resolution,
} from "../../../../src/machines/access-request/preparation.ts";
import { applied } from "../../../../src/machines/shared/json-patch.ts";
import { statechartOf } from "../../../../src/statecharts/graph.ts";
import {
  accessFactsWith,
  anOidcAccess,
  anOidcRequest,
  aTokenRequest,
} from "../../../support/access-fixtures.ts";
import { afterWrites, stepAccessWrites } from "../../../support/step-writes.ts";

const NOW_MS = Date.parse("2026-11-21T10:00:00Z");
const resolved: Resolution = {
  kind: "resolved",
  cluster: { name: "my-cluster", namespace: "foo" },
  profile: "test.eng.small",
  provider: "eng",
};

/** The request after preparation with `resolution`, as the API server would hold it. */
function prepared(request: AccessRequest, resolution: Resolution = resolved): AccessRequest {
  const result = prepareAccessRequest(request, resolution, NOW_MS, 10_000);
  return applied(applied(request, [...result.objectPatch]), [...result.statusPatch]);
}

const facts = accessFactsWith;

/** The request after one step of the controller against `f` (finalizer and status applied). */
function stepped(request: AccessRequest, f: Partial<AccessFacts>, clusterProblem?: string): AccessRequest {
  const hasFinalizer =
    request.metadata.finalizers?.includes(ACCESS_REQUEST_FINALIZERS.accessRequest) ?? false;
  const result = stepAccessWrites({
    request,
    facts: facts({ hasFinalizer, deleting: request.metadata.deletionTimestamp !== undefined, ...f }),
    secretName: `${request.metadata.name}.kubeconfig`,
    ...(clusterProblem ? { clusterProblem } : {}),
    now: "2026-11-21T10:00:00Z",
  });
  return afterWrites(request, result);
}

const aRequest = () =>
  aTokenRequest({
    permissions: [{ namespace: "team-a", rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }],
  });
const grantedRequest = () =>
  stepped(stepped(prepared(aRequest()), {}), { accessInPlace: true, accessGone: false, secretValid: true });

const deleting = (request: AccessRequest, finalizers: string[]): AccessRequest => ({
  ...request,
  metadata: { ...request.metadata, deletionTimestamp: "2026-11-21T11:00:00Z", finalizers },
});

describe("explainAccessRequest", () => {
  it("says an unprepared request waits for its Cluster reference, with preparation's message", () => {
    const lost = prepared(aRequest(), {
      kind: "unresolved",
      message: "Cluster foo/my-cluster does not exist",
    });
    expect(explainAccessRequest(lost)).toEqual({
      state: "pending",
      phase: "Pending",
      why: ["not prepared yet: Cluster foo/my-cluster does not exist (retrying)"],
      waitingFor: [
        "the Cluster reference to resolve: Cluster foo/my-cluster (spec.clusterRef) and its ClusterProfile must exist; preparation retries. spec.clusterRef cannot change: if it is wrong, delete the request and create another",
      ],
    });
  });

  it("says a request by ClusterRequest waits for that request to be Granted", () => {
    const byRequest: AccessRequest = {
      ...aRequest(),
      spec: { requestRef: { name: "my-request", namespace: "bar" }, token: {} },
    };
    const waiting = prepared(byRequest, {
      kind: "unresolved",
      message: "ClusterRequest bar/my-request is not Granted yet",
    });
    expect(explainAccessRequest(waiting).why).toEqual([
      "not prepared yet: ClusterRequest bar/my-request is not Granted yet (retrying)",
    ]);
    expect(explainAccessRequest(waiting).waitingFor[0]).toMatch(
      /^the ClusterRequest reference to resolve: ClusterRequest bar\/my-request \(spec\.requestRef\) must be Granted/,
    );
  });

  it("says who must act when nothing has looked at the request yet", () => {
    expect(explainAccessRequest(aRequest())).toMatchObject({
      state: "pending",
      phase: undefined,
      why: ["not prepared yet: it has no provider and profile labels, and no preparation has looked at it"],
    });
    expect(explainAccessRequest(aRequest()).waitingFor[0]).toMatch(/^AccessRequest preparation/);
    expect(explainAccessRequest(prepared(aRequest()))).toEqual({
      state: "pending",
      phase: "Pending",
      why: ['prepared for provider "eng" (profile "test.eng.small"), but no provider has acted on it yet'],
      waitingFor: ['the controller of provider "eng" (is it running?)'],
    });
  });

  it("says a request waits for its Cluster, with the controller's message, and points at explain cluster", () => {
    const waiting = stepped(
      prepared(aRequest()),
      { clusterReachable: false },
      "Cluster foo/my-cluster is not Ready yet",
    );
    expect(explainAccessRequest(waiting)).toEqual({
      state: "pending",
      phase: "Pending",
      why: ["waiting for the Cluster: Cluster foo/my-cluster is not Ready yet"],
      waitingFor: [
        "the Cluster foo/my-cluster to become Ready (the controller looks again every few seconds)",
        "`explain cluster foo/my-cluster` tells why it is not",
      ],
    });
  });

  it("says a backend that gives no admin access never grants", () => {
    const waiting = stepped(
      prepared(aRequest()),
      { clusterReachable: false },
      "the backend gives no access to Cluster foo/my-cluster",
    );
    expect(explainAccessRequest(waiting).why).toEqual([
      "waiting for the Cluster: the backend gives no access to Cluster foo/my-cluster",
    ]);
    expect(explainAccessRequest(waiting).waitingFor).toEqual([
      "the backend to give admin access to the Cluster (a backend without admin access, like simulated, never does: use one that has it)",
    ]);
  });

  it("says why a request is denied and that a person must act", () => {
    const denial = "backend simulated cannot set up OIDC trust; request token access instead";
    const denied = stepped(prepared(anOidcRequest(anOidcAccess())), { clusterReachable: false, denial });
    expect(explainAccessRequest(denied)).toEqual({
      state: "denied",
      phase: "Denied",
      why: [`denied: ${denial}`],
      waitingFor: [
        "a person: remove the cause or change the request (it is checked again on every look and goes back to Pending once it can be served), or delete it",
      ],
    });
  });

  it("says access is being granted while provisioning", () => {
    const provisioning = stepped(prepared(aRequest()), {});
    expect(explainAccessRequest(provisioning)).toEqual({
      state: "provisioning",
      phase: "Pending",
      why: [
        "access is being granted on the target cluster: ServiceAccount, roles and bindings, then the kubeconfig in Secret my-access.kubeconfig",
      ],
      waitingFor: [
        "the controller to find every access object in place and a valid credential in the Secret (it looks again every few seconds)",
      ],
    });
  });

  it("says the last attempt to grant failed, with the target's answer, and that it is retried", () => {
    const request = stepped(prepared(aRequest()), {});
    const result = stepAccessWrites({
      request,
      facts: facts({ hasFinalizer: true }),
      secretName: "my-access.kubeconfig",
      lastError: 'grantAccess failed: Cluster foo/my-cluster: 404 NotFound: namespaces "team-a" not found',
      now: "2026-11-21T10:00:01Z",
    });
    const failing = afterWrites(request, result);
    const explained = explainAccessRequest(failing);
    expect(explained.why).toEqual([
      'the last attempt to grant it failed: grantAccess failed: Cluster foo/my-cluster: 404 NotFound: namespaces "team-a" not found',
    ]);
    expect(explained.waitingFor[0]).toContain("retries with backoff");
  });

  it("says the target refuses the engine, in the API server's words, and what a person can do", () => {
    const request = stepped(prepared(aRequest()), {});
    const message =
      'the API server of Cluster foo/my-cluster refused the backend\'s admin access: 403 Forbidden: serviceaccounts is forbidden: User "x" cannot list resource "serviceaccounts" in API group "" at the cluster scope';
    const result = stepAccessWrites({
      request,
      facts: facts({ clusterReachable: false, targetFailing: true }),
      secretName: "my-access.kubeconfig",
      targetProblem: { reason: "TargetRefused", message },
      now: "2026-11-21T10:00:01Z",
    });
    const explained = explainAccessRequest(afterWrites(request, result));
    expect(explained.why).toEqual([`the target cluster refuses the engine: ${message}`]);
    expect(explained.waitingFor[0]).toMatch(
      /^a person to give the backend's admin access the rights it lacks/,
    );
  });

  it("names the Secret of a granted request, never its contents, and says it waits for nothing", () => {
    const granted = grantedRequest();
    const explanation = explainAccessRequest(granted);
    expect(explanation).toMatchObject({
      state: "granted",
      phase: "Granted",
      why: [
        "access granted: the kubeconfig is in Secret my-access.kubeconfig in namespace my-namespace (its contents are not shown)",
      ],
    });
    expect(explanation.waitingFor[0]).toMatch(/^nothing: it is Granted/);
  });

  it("says a granted request changed since is granted anew", () => {
    const granted = grantedRequest();
    const changed = { ...granted, metadata: { ...granted.metadata, generation: 2 } };
    const explanation = explainAccessRequest(changed);
    expect(explanation.why[0]).toBe(
      "the status describes generation 1, the spec is at 2: the latest change is not reconciled yet",
    );
    expect(explanation.waitingFor).toEqual([
      "preparation to set it back to Pending, then the controller grants it anew for the changed spec",
    ]);
  });

  it("follows a deletion: revoking on the target, then other finalizers, then the API server", () => {
    const granted = grantedRequest();
    const revoking = stepped(
      deleting(granted, [ACCESS_REQUEST_FINALIZERS.accessRequest, "example.com/keep"]),
      {
        accessInPlace: true,
        accessGone: false,
      },
    );
    expect(explainAccessRequest(revoking)).toEqual({
      state: "deleting.revoking",
      phase: "Granted",
      why: [
        "being deleted: the ServiceAccount, roles and bindings made for it on the target cluster, and its Secret, are being removed",
      ],
      waitingFor: [
        "the controller to find nothing of it left on the target cluster (or the Cluster unreachable); then our finalizer is removed",
        "then the owners of example.com/keep to remove them",
      ],
    });
    expect(explainAccessRequest(deleting(granted, ["example.com/keep"]))).toMatchObject({
      state: "deleting.revoking",
      why: ["being deleted; nothing of ours holds it, waiting for finalizers: example.com/keep"],
      waitingFor: ["their owners to remove them"],
    });
    expect(explainAccessRequest(deleting(granted, [])).waitingFor).toEqual([
      "the API server to delete the object",
    ]);
  });

  it("has a phrase for every guard the statechart uses", () => {
    const used = statechartOf(accessRequestMachine).transitions.flatMap((t) => (t.guard ? [t.guard] : []));
    expect(new Set(used)).toEqual(new Set(Object.keys(ACCESS_REQUEST_GUARD_PHRASES)));
  });
});
