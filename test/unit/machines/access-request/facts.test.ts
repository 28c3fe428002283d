/** The facts one look at an AccessRequest yields: what counts as in place, and the OIDC denials. */
import { describe, expect, it } from "vitest";
import type { AccessRequest } from "../../../../src/api/access-request.ts";
import {
  type AccessObservation,
  accessDenial,
  accessDifference,
  accessInPlace,
  type OwnedObject,
} from "../../../../src/machines/access-request/facts.ts";
import { accessPlan } from "../../../../src/machines/access-request/rbac-plan.ts";
import { anOidcAccess, anOidcRequest, aTokenRequest } from "../../../support/access-fixtures.ts";

const RULE = { apiGroups: [""], resources: ["pods"], verbs: ["get"] };
const backend = { name: "local", adminAccess: true, oidc: true };
const observation = (peers: AccessRequest[] = []): AccessObservation => ({
  clusterProblem: undefined,
  secret: undefined,
  oidcPeers: peers,
});

/** The planned objects as the API server returns them, with `edit` applied to each body. */
const asStored = (request: AccessRequest, edit: (body: Record<string, unknown>) => Record<string, unknown>) =>
  accessPlan(request).planned.map(
    ({ object }): OwnedObject => ({
      kind: object.kind,
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      name: object.metadata.name,
      body: edit({ ...(object as unknown as Record<string, unknown>) }),
    }),
  );

describe("accessInPlace", () => {
  it("counts a field the API server stores as null or leaves out like an empty one (else it re-applies forever)", () => {
    const request = aTokenRequest({ roleRefs: [{ kind: "ClusterRole", name: "view" }] });
    const plan = accessPlan(request);
    for (const empty of [null, undefined, []]) {
      const owned = asStored(request, (body) => ({ ...body, subjects: body.subjects, rules: empty }));
      expect(accessInPlace(owned, plan), String(empty)).toBe(true);
    }
  });

  it("names the first object that is missing or grants other rights", () => {
    const request = aTokenRequest({ permissions: [{ namespace: "apps", rules: [RULE] }] });
    const plan = accessPlan(request);
    const owned = asStored(request, (body) => (body.kind === "Role" ? { ...body, rules: [] } : body));
    expect(accessDifference(owned, plan)).toMatch(/^Role apps\/openmcp:.* has other rules than planned$/);
    expect(accessDifference(owned.slice(1), plan)).toMatch(/^ServiceAccount .* is missing$/);
    expect(
      accessDifference(
        asStored(request, (body) => body),
        plan,
      ),
    ).toBeUndefined();
  });
});

describe("accessDenial for OIDC", () => {
  const oidc = (name: string, uid: string, overrides: Parameters<typeof anOidcAccess>[0]) => {
    const built = anOidcRequest(anOidcAccess(overrides), uid);
    return {
      ...built,
      metadata: { ...built.metadata, name, creationTimestamp: `2026-01-0${uid}T00:00:00Z` },
    };
  };

  it("denies an issuer kube-apiserver would refuse, naming the field", () => {
    const request = oidc("plain", "1", { issuer: "http://oidc.example.com" });
    expect(accessDenial(request, observation(), backend, accessPlan(request))).toBe(
      'spec.oidc.issuer: OIDC issuer "http://oidc.example.com" is not an https:// URL; kube-apiserver trusts only issuers served over https',
    );
  });

  it("serves a second request for one issuer with another client ID and name, and denies one with the same client ID", () => {
    const first = oidc("first", "1", { name: "a", clientID: "one" });
    const other = oidc("other", "2", { name: "b", clientID: "two" });
    const clash = oidc("clash", "3", { name: "c", clientID: "one" });
    expect(accessDenial(other, observation([first]), backend, accessPlan(other))).toBeUndefined();
    expect(accessDenial(clash, observation([first, other]), backend, accessPlan(clash))).toContain(
      "client ID one is trusted on this cluster for AccessRequest my-namespace/first",
    );
    // The earlier request is not denied because of the later one.
    expect(accessDenial(first, observation([clash]), backend, accessPlan(first))).toBeUndefined();
  });
});

describe("accessDenial for the Secret", () => {
  it("denies a request whose name leaves no room for its Secret's (stored before the CRD refused it)", () => {
    const request = aTokenRequest({ roleRefs: [{ kind: "ClusterRole", name: "view" }] });
    const long = { ...request, metadata: { ...request.metadata, name: "a".repeat(250) } };
    expect(accessDenial(long, observation(), backend, accessPlan(long))).toBe(
      `the Secret's name ${"a".repeat(250)}.kubeconfig would be longer than 253 characters; give the AccessRequest a shorter name`,
    );
    expect(accessDenial(request, observation(), backend, accessPlan(request))).toBeUndefined();
  });
});
