/** OIDC subject prefixes: the effective prefixes, and subjects as they go into bindings. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Subject } from "../../../../src/api/access-request.ts";
import {
  effectivePrefix,
  oidcPrefixes,
  oidcSubject,
} from "../../../../src/machines/access-request/oidc-prefixes.ts";
import {
  anOidcAccess,
  configuredPrefix,
  oidcAccess,
  subject,
  subjectName,
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
