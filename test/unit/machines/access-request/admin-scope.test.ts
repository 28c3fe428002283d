/** A namespaced admin access (contract 1.2): what it may grant, the denial's words, and where ServiceAccounts live. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scopeDenial } from "../../../../src/machines/access-request/admin-scope.ts";
import { accessFacts, accessPlanOf } from "../../../../src/machines/access-request/facts.ts";
import { aTokenRequest, tokenAccess } from "../../../support/access-fixtures.ts";

const RULE = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };
const scope = { namespaces: ["tenant-a"], accessNamespace: "tenant-a" };
const backend = { name: "namespaced", adminAccess: true, oidc: false };

describe("scopeDenial", () => {
  it("lets a Role, a Role reference and a ClusterRole bound in a namespace of the scope through", () => {
    const request = aTokenRequest({
      permissions: [{ namespace: "tenant-a", rules: [RULE] }],
      roleRefs: [
        { kind: "Role", name: "reader", namespace: "tenant-a" },
        { kind: "ClusterRole", name: "view", namespace: "tenant-a" },
      ],
    });
    expect(scopeDenial(request, scope)).toBeUndefined();
  });

  it("names every cluster-wide permission and every namespace outside the scope", () => {
    const request = aTokenRequest({
      permissions: [{ rules: [RULE] }, { namespace: "kube-system", rules: [RULE] }],
      roleRefs: [{ kind: "ClusterRole", name: "view" }],
    });
    expect(scopeDenial(request, scope)).toBe(
      "the backend's admin access to this Cluster is limited to namespace(s) tenant-a, so it cannot grant what token.permissions[0] asks for cluster-wide rules (a ClusterRole); token.permissions[1] asks for namespace kube-system; token.roleRefs[0] binds ClusterRole view cluster-wide (a ClusterRoleBinding); ask for Roles (or ClusterRoles bound with a namespace) in that namespace only",
    );
  });

  it("denies nothing without a scope (cluster-admin)", () => {
    fc.assert(
      fc.property(tokenAccess, (token) => scopeDenial(aTokenRequest(token), undefined) === undefined),
    );
  });

  it("denies exactly the requests whose every object would not lie in the scope's namespaces", () => {
    fc.assert(
      fc.property(tokenAccess, (token) => {
        const request = aTokenRequest(token);
        const plan = accessPlanOf(request, scope);
        const namespaced = plan?.planned.every(
          ({ object }) =>
            object.metadata.namespace !== undefined && scope.namespaces.includes(object.metadata.namespace),
        );
        expect(scopeDenial(request, scope) === undefined).toBe(namespaced);
      }),
    );
  });
});

describe("facts with a namespaced admin access", () => {
  it("deny with the reason OutsideAdminScope, and keep the ServiceAccount in the access namespace", () => {
    const request = aTokenRequest({ permissions: [{ rules: [RULE] }] });
    const observation = { clusterProblem: undefined, secret: undefined, adminScope: scope };
    const facts = accessFacts(request, observation, accessPlanOf(request, scope), backend, 0);
    expect(facts.denialReason).toBe("OutsideAdminScope");
    expect(facts.denial).toMatch(
      /^the backend's admin access to this Cluster is limited to namespace\(s\) tenant-a/,
    );
    const fits = aTokenRequest({ permissions: [{ namespace: "tenant-a", rules: [RULE] }] });
    const plan = accessPlanOf(fits, scope);
    expect(plan?.planned[0]?.object).toMatchObject({
      kind: "ServiceAccount",
      metadata: { namespace: "tenant-a" },
    });
    expect(accessFacts(fits, observation, plan, backend, 0).denial).toBeUndefined();
  });
});
