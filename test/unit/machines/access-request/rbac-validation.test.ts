/** When an AccessRequest is denied: objects on the target cluster that are not ours, and nonsensical rules. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AccessRequest, PolicyRule, TokenAccess } from "../../../../src/api/access-request.ts";
import { ACCESS_NAMESPACE, ACCESS_OWNER_LABEL } from "../../../../src/machines/access-request/names.ts";
import type { KubeObject } from "../../../../src/machines/access-request/rbac-objects.ts";
import { desiredTokenAccess } from "../../../../src/machines/access-request/rbac-plan.ts";
import {
  type ExistingObject,
  invalidRules,
  rbacDenial,
} from "../../../../src/machines/access-request/rbac-validation.ts";
import {
  anOidcAccess,
  anOidcRequest,
  aTokenRequest,
  oidcAccess,
  TOKEN_REQUEST_BASE,
  tokenAccess,
  UID,
  uid,
} from "../../../support/access-fixtures.ts";

const ALL: PolicyRule = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };
const HEALTH: PolicyRule = { nonResourceURLs: ["/healthz"], verbs: ["get"] };

/** What the target cluster would report for `objects`, with the given owner uid (or no labels). */
function existing(objects: readonly KubeObject[], owner: string | undefined): ExistingObject[] {
  return objects.map((o) => ({
    kind: o.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    ...(owner === undefined ? {} : { labels: { [ACCESS_OWNER_LABEL]: owner } }),
  }));
}

/** A generated token request that {@link invalidRules} accepts (the only kind the controller applies). */
const validTokenRequest = fc
  .tuple(tokenAccess, uid)
  .map(([token, id]) => aTokenRequest(token, id))
  .filter((request) => invalidRules(request) === undefined);

describe("rbacDenial", () => {
  const named = aTokenRequest({
    permissions: [
      { name: "foo", namespace: "test", rules: [ALL] },
      { name: "bar", rules: [HEALTH] },
    ],
  });

  it("denies a named Role that exists and is someone else's, asking for another name", () => {
    expect(
      rbacDenial(named, [{ kind: "Role", namespace: "test", name: "foo", labels: { other: "x" } }]),
    ).toBe(
      "Role test/foo exists and is not managed by this AccessRequest; choose another name (token.permissions[0].name)",
    );
  });

  it("denies a named ClusterRole of another AccessRequest", () => {
    expect(
      rbacDenial(named, [
        { kind: "ClusterRole", name: "bar", labels: { [ACCESS_OWNER_LABEL]: "other-uid" } },
      ]),
    ).toBe(
      "ClusterRole bar exists and is not managed by this AccessRequest; choose another name (token.permissions[1].name)",
    );
  });

  it("allows objects labelled with this request's uid", () => {
    expect(
      rbacDenial(named, [{ kind: "ClusterRole", name: "bar", labels: { [ACCESS_OWNER_LABEL]: UID } }]),
    ).toBeUndefined();
  });

  it("ignores objects it does not need: another namespace, another kind, Namespaces", () => {
    expect(
      rbacDenial(named, [
        { kind: "Role", namespace: "elsewhere", name: "foo" },
        { kind: "ClusterRole", name: "foo" },
        { kind: "Namespace", name: "test" },
      ]),
    ).toBeUndefined();
  });

  it("denies a generated name taken by a foreign object too, without asking for a name", () => {
    expect(
      rbacDenial(aTokenRequest({}), [
        { kind: "ServiceAccount", namespace: ACCESS_NAMESPACE, name: TOKEN_REQUEST_BASE },
      ]),
    ).toBe(
      `ServiceAccount ${ACCESS_NAMESPACE}/${TOKEN_REQUEST_BASE} exists and is not managed by this AccessRequest; remove it from the target cluster or recreate the AccessRequest`,
    );
  });

  it("checks the names of OIDC roles", () => {
    const request = anOidcRequest(anOidcAccess({ roles: [{ name: "my-admin", rules: [ALL] }] }));
    expect(rbacDenial(request, [{ kind: "ClusterRole", name: "my-admin" }])).toBe(
      "ClusterRole my-admin exists and is not managed by this AccessRequest; choose another name (oidc.roles[0].name)",
    );
  });

  it("is undefined whenever everything that exists is ours", () => {
    fc.assert(
      fc.property(validTokenRequest, fc.array(fc.nat()), (request, picks) => {
        const objects = desiredTokenAccess(request).objects;
        const some = picks.flatMap((p) =>
          objects.length ? [objects[p % objects.length] as KubeObject] : [],
        );
        expect(rbacDenial(request, existing(some, request.metadata.uid))).toBeUndefined();
      }),
    );
  });

  it("names the object when one that exists is not ours, whatever the order of the list", () => {
    fc.assert(
      fc.property(validTokenRequest, fc.nat(), fc.option(uid), (request, pick, owner) => {
        fc.pre(owner !== request.metadata.uid);
        const objects = desiredTokenAccess(request).objects;
        const foreign = objects[pick % objects.length] as KubeObject;
        const ours = existing(
          objects.filter((o) => o !== foreign),
          request.metadata.uid,
        );
        const theirs = existing([foreign], owner ?? undefined);
        const denial = rbacDenial(request, [...ours, ...theirs]);
        const where = foreign.metadata.namespace ? `${foreign.metadata.namespace}/` : "";
        expect(denial).toContain(`${foreign.kind} ${where}${foreign.metadata.name} exists`);
        expect(rbacDenial(request, [...theirs, ...ours.reverse()])).toBe(denial);
      }),
    );
  });
});

describe("invalidRules", () => {
  const withRule = (rule: PolicyRule, namespace?: string): AccessRequest =>
    aTokenRequest({ permissions: [{ ...(namespace ? { namespace } : {}), rules: [rule] }] });

  it('accepts the contract\'s examples and the core group written as [""]', () => {
    expect(
      invalidRules(aTokenRequest({ permissions: [{ name: "foo", namespace: "test", rules: [ALL] }] })),
    ).toBeUndefined();
    expect(
      invalidRules(withRule({ apiGroups: [""], resources: ["pods"], verbs: ["get"] }, "ns")),
    ).toBeUndefined();
    expect(invalidRules(withRule(HEALTH))).toBeUndefined();
  });

  it("rejects a permission without rules (a role that grants nothing), in token permissions and OIDC roles", () => {
    expect(invalidRules(aTokenRequest({ permissions: [{ rules: [] }] }))).toMatch(
      /^token\.permissions\[0]\.rules: a permission needs at least one rule/,
    );
    const oidc = anOidcRequest(anOidcAccess({ roles: [{ namespace: "apps", rules: [] }] }));
    expect(invalidRules(oidc)).toMatch(/^oidc\.roles\[0]\.rules: a permission needs at least one rule/);
  });

  it("accepts resourceNames over several resources and names with ':' (Kubernetes does)", () => {
    const rule = { apiGroups: [""], resources: ["pods", "secrets"], resourceNames: ["a"], verbs: ["get"] };
    expect(
      invalidRules(aTokenRequest({ permissions: [{ name: "team:Reader", rules: [rule] }] })),
    ).toBeUndefined();
  });

  it("rejects empty verbs", () => {
    expect(invalidRules(withRule({ apiGroups: [""], resources: ["pods"], verbs: [] }))).toBe(
      'token.permissions[0].rules[0]: verbs must contain at least one verb ("*" for all)',
    );
  });

  it('rejects a resource rule without apiGroups, pointing to [""] for the core group', () => {
    const message =
      'token.permissions[0].rules[0]: a resource rule needs apiGroups; use [""] for the core group (pods, secrets, …) or ["*"] for all groups';
    expect(invalidRules(withRule({ resources: ["pods"], verbs: ["get"] }))).toBe(message);
    expect(invalidRules(withRule({ apiGroups: [], resources: ["pods"], verbs: ["get"] }))).toBe(message);
  });

  it("rejects a resource rule without resources", () => {
    expect(invalidRules(withRule({ apiGroups: [""], verbs: ["get"] }))).toBe(
      'token.permissions[0].rules[0]: a resource rule needs resources ("*" for all)',
    );
  });

  it("rejects nonResourceURLs in a namespaced Role, and mixed with resources", () => {
    expect(invalidRules(withRule(HEALTH, "ns"))).toMatch(
      /^token\.permissions\[0]\.rules\[0]: nonResourceURLs are only allowed in a ClusterRole/,
    );
    expect(invalidRules(withRule({ ...HEALTH, resources: ["pods"] }))).toMatch(
      /^token\.permissions\[0]\.rules\[0]: a rule covers either nonResourceURLs or resources/,
    );
  });

  it("rejects invalid names and namespaces, and a Role reference without namespace", () => {
    expect(invalidRules(aTokenRequest({ permissions: [{ name: "a/b", rules: [ALL] }] }))).toMatch(
      /^token\.permissions\[0]\.name: "a\/b" is not a valid role or binding name/,
    );
    expect(invalidRules(aTokenRequest({ permissions: [{ namespace: "Team_A", rules: [ALL] }] }))).toMatch(
      /^token\.permissions\[0]\.namespace: "Team_A" is not a valid namespace name/,
    );
    expect(invalidRules(aTokenRequest({ roleRefs: [{ kind: "Role", name: "reader" }] }))).toBe(
      "token.roleRefs[0]: a Role reference needs the namespace of the Role",
    );
  });

  it("rejects two permissions that would make the same role", () => {
    const token: TokenAccess = {
      permissions: [
        { name: "foo", rules: [ALL] },
        { name: "foo", rules: [HEALTH] },
      ],
    };
    expect(invalidRules(aTokenRequest(token))).toBe(
      "token.permissions[0] and token.permissions[1] both make ClusterRole foo; give them different names",
    );
    expect(
      invalidRules(
        aTokenRequest({
          permissions: [
            { name: "foo", rules: [ALL] },
            { name: "foo", namespace: "ns", rules: [ALL] },
          ],
        }),
      ),
    ).toBeUndefined();
  });

  it("rejects OIDC subjects the API server would refuse or that match nobody", () => {
    const binding = (subject: { kind: string; name: string; apiGroup?: string; namespace?: string }) =>
      anOidcRequest(anOidcAccess({ roleBindings: [{ subjects: [subject], roleRefs: [] }] }));
    expect(invalidRules(binding({ kind: "Robot", name: "r2" }))).toBe(
      'oidc.roleBindings[0].subjects[0].kind: must be User, Group or ServiceAccount, not "Robot"',
    );
    expect(invalidRules(binding({ kind: "User", name: "::" }))).toBe(
      "oidc.roleBindings[0].subjects[0].name: a User needs a name",
    );
    expect(invalidRules(binding({ kind: "Group", name: "g", apiGroup: "v1" }))).toMatch(
      /apiGroup: must be rbac/,
    );
    expect(invalidRules(binding({ kind: "ServiceAccount", name: "sa" }))).toBe(
      "oidc.roleBindings[0].subjects[0].namespace: a ServiceAccount subject needs the namespace of the account",
    );
    expect(invalidRules(binding({ kind: "ServiceAccount", name: "sa", namespace: "ns" }))).toBeUndefined();
  });

  it("accepts every generated OIDC access whose role names differ", () => {
    fc.assert(
      fc.property(oidcAccess, (oidc) => {
        const names = (oidc.roles ?? [])
          .map((r) => `${r.namespace ?? ""}/${r.name ?? ""}`)
          .filter((n) => !n.endsWith("/"));
        fc.pre(new Set(names).size === names.length);
        expect(invalidRules(anOidcRequest(oidc))).toBeUndefined();
      }),
    );
  });
});
