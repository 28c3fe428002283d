/** Token access on the target cluster: the objects it needs, when existing objects deny it, and nonsensical rules. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AccessRequest, PolicyRule, TokenAccess } from "../../../../src/api/access-request.ts";
import {
  ACCESS_NAMESPACE,
  ACCESS_OWNER_LABEL,
  accessBaseName,
  accessRequestIdentity,
} from "../../../../src/machines/access-request/names.ts";
import {
  type BindingObject,
  desiredTokenAccess,
  type ExistingObject,
  invalidRules,
  type KubeObject,
  type RoleObject,
  rbacDenial,
} from "../../../../src/machines/access-request/rbac.ts";
import {
  anOidcAccess,
  anOidcRequest,
  aTokenRequest,
  oidcAccess,
  tokenAccess,
  UID,
  uid,
} from "../../../support/access-fixtures.ts";

const BASE = accessBaseName({ namespace: "my-namespace", name: "my-access", uid: UID });
const LABELS = { [ACCESS_OWNER_LABEL]: UID, "app.kubernetes.io/managed-by": "openmcp-engine" };
const RBAC = "rbac.authorization.k8s.io/v1";
const ACCOUNT = { kind: "ServiceAccount", name: BASE, namespace: ACCESS_NAMESPACE };
const ALL: PolicyRule = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };
const HEALTH: PolicyRule = { nonResourceURLs: ["/healthz"], verbs: ["get"] };

const BASE_OF = (request: AccessRequest) => accessBaseName(accessRequestIdentity(request));
const isRole = (o: KubeObject): o is RoleObject => o.kind === "Role" || o.kind === "ClusterRole";
const isBinding = (o: KubeObject): o is BindingObject =>
  o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding";

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

describe("desiredTokenAccess", () => {
  it("makes the contract's example: a Role in its namespace, its RoleBinding, and a ClusterRole reference", () => {
    const desired = desiredTokenAccess(
      aTokenRequest({
        permissions: [{ name: "foo", namespace: "test", rules: [ALL] }],
        roleRefs: [{ kind: "ClusterRole", name: "my-clusterrole" }],
      }),
    );
    expect(desired).toEqual({
      namespaces: [ACCESS_NAMESPACE, "test"],
      objects: [
        {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: BASE, namespace: ACCESS_NAMESPACE, labels: LABELS },
        },
        {
          apiVersion: RBAC,
          kind: "Role",
          metadata: { name: "foo", namespace: "test", labels: LABELS },
          rules: [ALL],
        },
        {
          apiVersion: RBAC,
          kind: "RoleBinding",
          metadata: { name: "foo", namespace: "test", labels: LABELS },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "foo" },
          subjects: [ACCOUNT],
        },
        {
          apiVersion: RBAC,
          kind: "ClusterRoleBinding",
          metadata: { name: `openmcp:${BASE}:ref0`, labels: LABELS },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "my-clusterrole" },
          subjects: [ACCOUNT],
        },
      ],
    });
  });

  it("makes a ClusterRole with a generated name for a permission without namespace or name", () => {
    const { objects } = desiredTokenAccess(aTokenRequest({ permissions: [{ rules: [HEALTH] }] }));
    expect(objects.slice(1)).toEqual([
      {
        apiVersion: RBAC,
        kind: "ClusterRole",
        metadata: { name: `openmcp:${BASE}:p0`, labels: LABELS },
        rules: [HEALTH],
      },
      {
        apiVersion: RBAC,
        kind: "ClusterRoleBinding",
        metadata: { name: `openmcp:${BASE}:p0`, labels: LABELS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `openmcp:${BASE}:p0` },
        subjects: [ACCOUNT],
      },
    ]);
  });

  it("binds a referenced Role in its namespace, and a ClusterRole with a namespace only in that namespace", () => {
    const { objects, namespaces } = desiredTokenAccess(
      aTokenRequest({
        roleRefs: [
          { kind: "Role", name: "reader", namespace: "team-a" },
          { kind: "ClusterRole", name: "edit", namespace: "team-b" },
        ],
      }),
    );
    expect(namespaces).toEqual([ACCESS_NAMESPACE]);
    expect(objects.slice(1)).toEqual([
      {
        apiVersion: RBAC,
        kind: "RoleBinding",
        metadata: { name: `openmcp:${BASE}:ref0`, namespace: "team-a", labels: LABELS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
        subjects: [ACCOUNT],
      },
      {
        apiVersion: RBAC,
        kind: "RoleBinding",
        metadata: { name: `openmcp:${BASE}:ref1`, namespace: "team-b", labels: LABELS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
        subjects: [ACCOUNT],
      },
    ]);
  });

  it("does not list the namespace of a permission that disables namespace creation", () => {
    const { namespaces } = desiredTokenAccess(
      aTokenRequest({
        permissions: [
          { namespace: "kept", disableAutomaticNamespaceCreation: true, rules: [] },
          { namespace: "made", rules: [] },
          { namespace: "made", rules: [] },
        ],
      }),
    );
    expect(namespaces).toEqual([ACCESS_NAMESPACE, "made"]);
  });

  it("labels every object with the request's uid", () => {
    fc.assert(
      fc.property(validTokenRequest, (request) => {
        for (const object of desiredTokenAccess(request).objects) {
          expect(object.metadata.labels[ACCESS_OWNER_LABEL]).toBe(request.metadata.uid);
        }
      }),
    );
  });

  it("gives every permission exactly one role with exactly its rules, and one binding of it to our ServiceAccount", () => {
    fc.assert(
      fc.property(validTokenRequest, (request) => {
        const { objects } = desiredTokenAccess(request);
        const account = objects[0];
        expect(account?.kind).toBe("ServiceAccount");
        const permissions = request.spec.token?.permissions ?? [];
        expect(objects.filter(isRole)).toHaveLength(permissions.length); // referenced roles are not ours
        for (const [i, permission] of permissions.entries()) {
          const role = objects.filter(isRole)[i];
          expect(role?.kind).toBe(permission.namespace ? "Role" : "ClusterRole");
          expect(role?.metadata.namespace).toBe(permission.namespace || undefined);
          expect(role?.rules).toEqual(permission.rules);
          // The permission's own binding (a roleRef naming the same role adds another, on purpose).
          const bindings = objects.filter(
            (o) =>
              isBinding(o) &&
              o.metadata.name === role?.metadata.name &&
              o.roleRef.kind === role?.kind &&
              o.roleRef.name === role.metadata.name &&
              o.metadata.namespace === role.metadata.namespace,
          ) as BindingObject[];
          expect(bindings).toHaveLength(1);
          expect(bindings[0]?.subjects).toEqual([
            { kind: "ServiceAccount", name: account?.metadata.name, namespace: ACCESS_NAMESPACE },
          ]);
        }
      }),
    );
  });

  it("binds every role reference once, in the right scope, to our ServiceAccount", () => {
    fc.assert(
      fc.property(validTokenRequest, (request) => {
        const refs = request.spec.token?.roleRefs ?? [];
        const all = desiredTokenAccess(request).objects.filter(isBinding);
        const bindings = all.slice(all.length - refs.length); // reference bindings come last
        expect(bindings.length).toBe(refs.length);
        for (const [j, ref] of refs.entries()) {
          const binding = bindings[j];
          expect(binding?.kind).toBe(ref.namespace ? "RoleBinding" : "ClusterRoleBinding");
          expect(binding?.metadata.namespace).toBe(ref.namespace);
          expect(binding?.roleRef).toEqual({
            apiGroup: "rbac.authorization.k8s.io",
            kind: ref.kind,
            name: ref.name,
          });
          expect(binding?.subjects).toEqual([
            { kind: "ServiceAccount", name: BASE_OF(request), namespace: ACCESS_NAMESPACE },
          ]);
        }
      }),
    );
  });

  it("applies the ServiceAccount first, then roles, then bindings", () => {
    const rank = (o: KubeObject) => (o.kind === "ServiceAccount" ? 0 : isRole(o) ? 1 : 2);
    fc.assert(
      fc.property(validTokenRequest, (request) => {
        const ranks = desiredTokenAccess(request).objects.map(rank);
        expect(ranks).toEqual([...ranks].sort());
      }),
    );
  });

  it("lists a namespace iff some permission in it does not disable creation, plus ours, once each", () => {
    fc.assert(
      fc.property(validTokenRequest, (request) => {
        const { namespaces } = desiredTokenAccess(request);
        const permissions = request.spec.token?.permissions ?? [];
        expect(new Set(namespaces).size).toBe(namespaces.length);
        expect(namespaces[0]).toBe(ACCESS_NAMESPACE);
        const wanted = permissions.filter((p) => p.namespace && !p.disableAutomaticNamespaceCreation);
        for (const namespace of new Set(permissions.flatMap((p) => (p.namespace ? [p.namespace] : [])))) {
          if (namespace === ACCESS_NAMESPACE) continue;
          expect(namespaces.includes(namespace)).toBe(wanted.some((p) => p.namespace === namespace));
        }
        expect(namespaces.length).toBe(new Set([ACCESS_NAMESPACE, ...wanted.map((p) => p.namespace)]).size);
      }),
    );
  });

  it("is deterministic and shares no arrays with the spec", () => {
    fc.assert(
      fc.property(validTokenRequest, (request) => {
        const first = desiredTokenAccess(request);
        expect(desiredTokenAccess(request)).toEqual(first);
        const roles = first.objects.filter(isRole);
        for (const [i, permission] of (request.spec.token?.permissions ?? []).entries()) {
          for (const [r, rule] of permission.rules.entries())
            expect(roles[i]?.rules[r]?.verbs).not.toBe(rule.verbs);
        }
      }),
    );
  });
});

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
      rbacDenial(aTokenRequest({}), [{ kind: "ServiceAccount", namespace: ACCESS_NAMESPACE, name: BASE }]),
    ).toBe(
      `ServiceAccount ${ACCESS_NAMESPACE}/${BASE} exists and is not managed by this AccessRequest; remove it from the target cluster or recreate the AccessRequest`,
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
    expect(invalidRules(aTokenRequest({ permissions: [{ rules: [] }] }))).toBeUndefined();
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
    expect(invalidRules(aTokenRequest({ permissions: [{ name: "a/b", rules: [] }] }))).toMatch(
      /^token\.permissions\[0]\.name: "a\/b" is not a valid role or binding name/,
    );
    expect(invalidRules(aTokenRequest({ permissions: [{ namespace: "Team_A", rules: [] }] }))).toMatch(
      /^token\.permissions\[0]\.namespace: "Team_A" is not a valid namespace name/,
    );
    expect(invalidRules(aTokenRequest({ roleRefs: [{ kind: "Role", name: "reader" }] }))).toBe(
      "token.roleRefs[0]: a Role reference needs the namespace of the Role",
    );
  });

  it("rejects two permissions that would make the same role", () => {
    const token: TokenAccess = {
      permissions: [
        { name: "foo", rules: [] },
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
            { name: "foo", rules: [] },
            { name: "foo", namespace: "ns", rules: [] },
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
