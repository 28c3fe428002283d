/** The objects an AccessRequest needs on its target cluster, for token and for OIDC access. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AccessRequest, PolicyRule, Subject } from "../../../../src/api/access-request.ts";
import {
  ACCESS_NAMESPACE,
  ACCESS_OWNER_LABEL,
  accessBaseName,
  accessRequestIdentity,
} from "../../../../src/machines/access-request/names.ts";
import { oidcSubject } from "../../../../src/machines/access-request/oidc-prefixes.ts";
import type {
  BindingObject,
  KubeObject,
  RoleObject,
} from "../../../../src/machines/access-request/rbac-objects.ts";
import { desiredOidcAccess, desiredTokenAccess } from "../../../../src/machines/access-request/rbac-plan.ts";
import { invalidRules } from "../../../../src/machines/access-request/rbac-validation.ts";
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

const LABELS = { [ACCESS_OWNER_LABEL]: UID, "app.kubernetes.io/managed-by": "openmcp-engine" };
const RBAC = "rbac.authorization.k8s.io/v1";
const RBAC_GROUP = "rbac.authorization.k8s.io";
const ACCOUNT = { kind: "ServiceAccount", name: TOKEN_REQUEST_BASE, namespace: ACCESS_NAMESPACE };
const ALL: PolicyRule = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };
const HEALTH: PolicyRule = { nonResourceURLs: ["/healthz"], verbs: ["get"] };

const BASE_OF = (request: AccessRequest) => accessBaseName(accessRequestIdentity(request));
const isRole = (o: KubeObject): o is RoleObject => o.kind === "Role" || o.kind === "ClusterRole";
const isBinding = (o: KubeObject): o is BindingObject =>
  o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding";
const user = (name: string): Subject => ({ kind: "User", name });
const group = (name: string): Subject => ({ kind: "Group", name });

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
          metadata: { name: TOKEN_REQUEST_BASE, namespace: ACCESS_NAMESPACE, labels: LABELS },
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
          metadata: { name: `openmcp:${TOKEN_REQUEST_BASE}:ref0`, labels: LABELS },
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
        metadata: { name: `openmcp:${TOKEN_REQUEST_BASE}:p0`, labels: LABELS },
        rules: [HEALTH],
      },
      {
        apiVersion: RBAC,
        kind: "ClusterRoleBinding",
        metadata: { name: `openmcp:${TOKEN_REQUEST_BASE}:p0`, labels: LABELS },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: `openmcp:${TOKEN_REQUEST_BASE}:p0`,
        },
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
        metadata: { name: `openmcp:${TOKEN_REQUEST_BASE}:ref0`, namespace: "team-a", labels: LABELS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
        subjects: [ACCOUNT],
      },
      {
        apiVersion: RBAC,
        kind: "RoleBinding",
        metadata: { name: `openmcp:${TOKEN_REQUEST_BASE}:ref1`, namespace: "team-b", labels: LABELS },
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

describe("desiredOidcAccess", () => {
  it("makes the contract's example: an unbound ClusterRole and one binding per subject list and role", () => {
    const request = anOidcRequest(
      anOidcAccess({
        usernamePrefix: "my-user:",
        groupsPrefix: "my-group:",
        roleBindings: [
          {
            subjects: [user("foo"), group("bar")],
            roleRefs: [
              { kind: "ClusterRole", name: "my-cluster-role" },
              { kind: "Role", name: "my-role", namespace: "default" },
            ],
          },
        ],
        roles: [{ name: "my-admin", rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }],
      }),
    );
    const base = accessBaseName({ namespace: "my-namespace", name: "my-oidc-access", uid: UID });
    const labels = { [ACCESS_OWNER_LABEL]: UID, "app.kubernetes.io/managed-by": "openmcp-engine" };
    const subjects = [
      { kind: "User", name: "my-user:foo", apiGroup: RBAC_GROUP },
      { kind: "Group", name: "my-group:bar", apiGroup: RBAC_GROUP },
    ];
    expect(desiredOidcAccess(request)).toEqual({
      namespaces: [],
      objects: [
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "my-admin", labels },
          rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: `openmcp:${base}:oidc0-0`, labels },
          roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "my-cluster-role" },
          subjects,
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: `openmcp:${base}:oidc0-1`, namespace: "default", labels },
          roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: "my-role" },
          subjects,
        },
      ],
    });
  });

  it("makes no ServiceAccount, labels everything with the uid, and makes one binding per entry and reference", () => {
    fc.assert(
      fc.property(oidcAccess, uid, (oidc, id) => {
        const request = anOidcRequest(oidc, id);
        fc.pre(invalidRules(request) === undefined);
        const { objects } = desiredOidcAccess(request);
        expect(objects.some((o) => o.kind === "ServiceAccount")).toBe(false);
        for (const o of objects) expect(o.metadata.labels[ACCESS_OWNER_LABEL]).toBe(id);
        const roles = objects.filter((o) => o.kind === "Role" || o.kind === "ClusterRole");
        expect(roles.map((o) => ("rules" in o ? o.rules : []))).toEqual(
          (oidc.roles ?? []).map((r) => r.rules),
        );
        const bindings = objects.filter((o) => "roleRef" in o);
        const expected = oidc.roleBindings.flatMap((entry) =>
          entry.roleRefs.map((ref) => ({
            roleRef: { apiGroup: RBAC_GROUP, kind: ref.kind, name: ref.name },
            subjects: entry.subjects.map((s) => oidcSubject(s, oidc)),
          })),
        );
        expect(
          bindings.map((b) => ("roleRef" in b ? { roleRef: b.roleRef, subjects: b.subjects } : {})),
        ).toEqual(expected);
      }),
    );
  });

  it("lists the namespaces of roles unless they disable creation", () => {
    fc.assert(
      fc.property(oidcAccess, (oidc) => {
        const { namespaces } = desiredOidcAccess(anOidcRequest(oidc));
        const wanted = (oidc.roles ?? []).flatMap((r) =>
          r.namespace && !r.disableAutomaticNamespaceCreation ? [r.namespace] : [],
        );
        expect(namespaces).toEqual([...new Set(wanted)]);
      }),
    );
  });
});
