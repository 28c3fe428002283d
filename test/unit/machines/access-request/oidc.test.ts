/** OIDC access on the target cluster: subject prefixes and the roles and bindings it needs. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Subject } from "../../../../src/api/access-request.ts";
import { ACCESS_OWNER_LABEL, accessBaseName } from "../../../../src/machines/access-request/names.ts";
import {
  desiredOidcAccess,
  effectivePrefix,
  invalidRules,
  oidcPrefixes,
  oidcSubject,
} from "../../../../src/machines/access-request/rbac.ts";
import {
  anOidcAccess,
  anOidcRequest,
  configuredPrefix,
  oidcAccess,
  subject,
  subjectName,
  UID,
  uid,
} from "../../../support/access-fixtures.ts";

const RBAC_GROUP = "rbac.authorization.k8s.io";
const user = (name: string): Subject => ({ kind: "User", name });
const group = (name: string): Subject => ({ kind: "Group", name });

describe("oidcSubject", () => {
  it("prefixes users and groups with '<provider name>:' when no prefix is configured", () => {
    const oidc = anOidcAccess();
    expect(oidcSubject(user("foo"), oidc)).toEqual({
      kind: "User",
      name: "my-oidc-provider:foo",
      apiGroup: RBAC_GROUP,
    });
    expect(oidcSubject(group("bar"), oidc)).toEqual({
      kind: "Group",
      name: "my-oidc-provider:bar",
      apiGroup: RBAC_GROUP,
    });
  });

  it("uses the configured prefixes, users and groups each their own", () => {
    const oidc = anOidcAccess({ usernamePrefix: "my-user:", groupsPrefix: "my-group:" });
    expect(oidcSubject(user("foo"), oidc).name).toBe("my-user:foo");
    expect(oidcSubject(group("bar"), oidc).name).toBe("my-group:bar");
  });

  it("appends ':' to a configured prefix without one, as openMCP's Default() does", () => {
    const oidc = anOidcAccess({ usernamePrefix: "my-user", groupsPrefix: "corp:teams" });
    expect(oidcSubject(user("foo"), oidc).name).toBe("my-user:foo");
    expect(oidcSubject(group("bar"), oidc).name).toBe("corp:teams:bar");
  });

  it("adds no prefix when it is configured as the empty string", () => {
    const oidc = anOidcAccess({ usernamePrefix: "", groupsPrefix: "" });
    expect(oidcSubject(user("foo"), oidc).name).toBe("foo");
    expect(oidcSubject(group("bar"), oidc).name).toBe("bar");
  });

  it("uses a name starting with '::' as it is, without the '::'", () => {
    const oidc = anOidcAccess({ usernamePrefix: "my-user:" });
    expect(oidcSubject(user("::system:admin-team"), oidc)).toEqual({
      kind: "User",
      name: "system:admin-team",
      apiGroup: RBAC_GROUP,
    });
    expect(oidcSubject(group("::devs"), anOidcAccess()).name).toBe("devs");
    expect(oidcSubject(user(":single"), anOidcAccess()).name).toBe("my-oidc-provider::single");
  });

  it("leaves ServiceAccount subjects alone, and keeps a given apiGroup", () => {
    const account = { kind: "ServiceAccount", name: "robot", namespace: "ci" };
    expect(oidcSubject(account, anOidcAccess())).toBe(account);
    expect(oidcSubject({ ...user("u"), apiGroup: RBAC_GROUP }, anOidcAccess()).apiGroup).toBe(RBAC_GROUP);
  });

  it("keeps the name of '::' subjects, whatever the configuration", () => {
    fc.assert(
      fc.property(oidcAccess, fc.constantFrom("User", "Group"), subjectName, (oidc, kind, name) => {
        expect(oidcSubject({ kind, name: `::${name}` }, oidc).name).toBe(name);
      }),
    );
  });

  it("puts exactly the effective prefix before every other user or group name", () => {
    fc.assert(
      fc.property(oidcAccess, fc.constantFrom("User", "Group"), subjectName, (oidc, kind, name) => {
        fc.pre(!name.startsWith("::"));
        const prefix = kind === "User" ? oidcPrefixes(oidc).username : oidcPrefixes(oidc).groups;
        expect(oidcSubject({ kind, name }, oidc).name).toBe(`${prefix}${name}`);
      }),
    );
  });

  it("gives the same subjects once the prefixes are made explicit (defaulting is idempotent)", () => {
    fc.assert(
      fc.property(oidcAccess, subject, (oidc, s) => {
        const { username, groups } = oidcPrefixes(oidc);
        const defaulted = { ...oidc, usernamePrefix: username, groupsPrefix: groups };
        expect(oidcPrefixes(defaulted)).toEqual(oidcPrefixes(oidc));
        expect(oidcSubject(s, defaulted)).toEqual(oidcSubject(s, oidc));
      }),
    );
  });

  it("is idempotent where nothing is added: service accounts, and names under an empty prefix", () => {
    fc.assert(
      fc.property(oidcAccess, subject, (oidc, s) => {
        const unprefixed = { ...oidc, usernamePrefix: "", groupsPrefix: "" };
        fc.pre(!s.name.startsWith("::"));
        const once = oidcSubject(s, unprefixed);
        expect(oidcSubject(once, unprefixed)).toEqual(once);
        if (s.kind === "ServiceAccount") expect(oidcSubject(oidcSubject(s, oidc), oidc)).toEqual(s);
      }),
    );
  });
});

describe("effectivePrefix", () => {
  it("defaults to '<name>:', keeps '' and a trailing ':', and appends a missing one", () => {
    expect(effectivePrefix(undefined, "idp")).toBe("idp:");
    expect(effectivePrefix("", "idp")).toBe("");
    expect(effectivePrefix("corp:", "idp")).toBe("corp:");
    expect(effectivePrefix("corp", "idp")).toBe("corp:");
  });

  it("is idempotent and ends with ':' unless disabled", () => {
    fc.assert(
      fc.property(configuredPrefix, fc.stringMatching(/^[a-z0-9]{1,8}$/), (configured, name) => {
        const prefix = effectivePrefix(configured, name);
        expect(effectivePrefix(prefix, name)).toBe(prefix);
        expect(prefix === "" || prefix.endsWith(":")).toBe(true);
        expect(prefix === "").toBe(configured === "");
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
