/** Names of the objects an AccessRequest gets on its target cluster: readable, valid, deterministic, distinct. */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ACCESS_REQUEST_LABELS } from "../../../../src/api/constants/access-request.ts";
import {
  ACCESS_OWNER_LABEL,
  accessBaseName,
  accessLabels,
  accessRequestIdentity,
  oidcBindingName,
  permissionName,
  roleRefBindingName,
  serviceAccountName,
} from "../../../../src/machines/access-request/names.ts";
import { aTokenRequest, uid } from "../../../support/access-fixtures.ts";

const request = { namespace: "my-namespace", name: "my-access", uid: "u-1" };
const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 8);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Any text a namespace or name could be, and worse: upper case, dots, unicode, empty, very long. */
const anyText = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,60}[a-z0-9])?$/),
  fc.string({ unit: "binary", maxLength: 300 }),
);
const identity = fc.record({ namespace: anyText, name: anyText, uid });

describe("accessBaseName", () => {
  it("is <namespace>-<name>-<first 8 hex of sha256(uid)>", () => {
    expect(accessBaseName(request)).toBe(`my-namespace-my-access-${hash("u-1")}`);
  });

  it("lowercases, turns runs of other characters into one '-', and trims '-' at the ends", () => {
    expect(accessBaseName({ namespace: "-Team_A-", name: "My..Access.v2", uid: "u" })).toBe(
      `team-a-my-access-v2-${hash("u")}`,
    );
  });

  it("cuts long names so that the whole is 63 characters, without a '-' before the hash", () => {
    // The cut at 54 characters falls just after the '-' before "yyyy", which is dropped with it.
    const name = accessBaseName({ namespace: "n".repeat(40), name: `${"x".repeat(12)}-yyyy`, uid: "u" });
    expect(name).toBe(`${"n".repeat(40)}-${"x".repeat(12)}-${hash("u")}`);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(accessBaseName({ namespace: "a".repeat(63), name: "b".repeat(253), uid: "u" })).toHaveLength(63);
  });

  it("falls back to 'access' when nothing readable is left", () => {
    expect(accessBaseName({ namespace: "", name: "ÄÖÜ", uid: "u" })).toBe(`access-${hash("u")}`);
  });

  it("is always a DNS-1123 label (a valid ServiceAccount name)", () => {
    fc.assert(
      fc.property(identity, (id) => {
        const name = accessBaseName(id);
        expect(name.length).toBeLessThanOrEqual(63);
        expect(name).toMatch(DNS_LABEL);
      }),
    );
  });

  it("is deterministic", () => {
    fc.assert(fc.property(identity, (id) => accessBaseName(id) === accessBaseName({ ...id })));
  });

  it("gives different uids different names, whatever the namespace and name", () => {
    fc.assert(
      fc.property(identity, uid, (id, otherUid) => {
        fc.pre(otherUid !== id.uid);
        expect(accessBaseName({ ...id, uid: otherUid })).not.toBe(accessBaseName(id));
      }),
    );
  });

  it("tells apart requests whose namespace and name sanitise to the same text, by the uid", () => {
    const a = accessBaseName({ namespace: "a-b", name: "c", uid: "1" });
    const b = accessBaseName({ namespace: "a", name: "b.c", uid: "2" });
    expect(a.slice(0, -9)).toBe(b.slice(0, -9));
    expect(a).not.toBe(b);
  });

  it("is injective over many uids at once", () => {
    fc.assert(
      fc.property(
        anyText,
        anyText,
        fc.uniqueArray(uid, { minLength: 2, maxLength: 50 }),
        (namespace, name, uids) => {
          const names = uids.map((u) => accessBaseName({ namespace, name, uid: u }));
          expect(new Set(names).size).toBe(uids.length);
        },
      ),
    );
  });
});

describe("derived names", () => {
  const base = accessBaseName(request);

  it("names the ServiceAccount by the base name", () => {
    expect(serviceAccountName(request)).toBe(base);
  });

  it("uses a permission's own name, and generates one when it has none or an empty one", () => {
    expect(permissionName(request, 0, { name: "foo", rules: [] })).toBe("foo");
    expect(permissionName(request, 2, { rules: [] })).toBe(`openmcp:${base}:p2`);
    expect(permissionName(request, 3, { name: "", rules: [] })).toBe(`openmcp:${base}:p3`);
  });

  it("names role reference and OIDC bindings by their indices", () => {
    expect(roleRefBindingName(request, 1)).toBe(`openmcp:${base}:ref1`);
    expect(oidcBindingName(request, 2, 0)).toBe(`openmcp:${base}:oidc2-0`);
  });

  it("labels objects with the owner uid and the engine as manager", () => {
    expect(ACCESS_OWNER_LABEL).toBe("engine.openmcp.cloud/access-request-uid");
    expect(ACCESS_REQUEST_LABELS.accessRequestUid).toBe(ACCESS_OWNER_LABEL);
    expect(accessLabels(request)).toEqual({
      "engine.openmcp.cloud/access-request-uid": "u-1",
      "app.kubernetes.io/managed-by": "openmcp-engine",
    });
  });

  it("reads the identity from an AccessRequest's metadata", () => {
    expect(accessRequestIdentity(aTokenRequest({}, "u-9"))).toEqual({
      namespace: "my-namespace",
      name: "my-access",
      uid: "u-9",
    });
  });
});
