/** Which issuers a cluster must trust for the OIDC AccessRequests that target it: every request served, true conflicts named. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AccessRequest, OidcAccess } from "../../../../src/api/access-request.ts";
import { MAX_TRUSTED_ISSUERS } from "../../../../src/machines/access-request/oidc-issuer.ts";
import {
  oidcTrustOf,
  oidcTrustPlan,
  sameMapping,
} from "../../../../src/machines/access-request/oidc-trust.ts";
import { authenticationConfig } from "../../../../src/providers/shared/authentication-config.ts";
import { anOidcAccess } from "../../../support/access-fixtures.ts";
import { anAccessRequest } from "../../../support/builders.ts";

const request = (
  name: string,
  created: string,
  oidc: Partial<OidcAccess>,
  phase?: "Granted" | "Pending",
): AccessRequest => {
  const built = anAccessRequest({ name, namespace: "team", oidc: anOidcAccess(oidc) });
  return {
    ...built,
    metadata: { ...built.metadata, creationTimestamp: created },
    ...(phase ? { status: { phase, observedGeneration: 1, conditions: [] } } : {}),
  };
};

describe("oidcTrustPlan", () => {
  it("trusts each issuer and mapping once, with every client ID as an audience and the request's claims and prefixes", () => {
    const plan = oidcTrustPlan([
      request("b", "2026-01-02T00:00:00Z", { name: "corp", issuer: "https://a.example", clientID: "two" }),
      request("a", "2026-01-01T00:00:00Z", { name: "corp", issuer: "https://a.example", clientID: "one" }),
      request("c", "2026-01-03T00:00:00Z", {
        name: "other",
        issuer: "https://b.example",
        clientID: "x",
        usernameClaim: "email",
        groupsPrefix: "",
      }),
    ]);
    expect(plan.conflicts.size).toBe(0);
    expect(plan.issuers).toEqual([
      {
        issuer: "https://a.example",
        audiences: ["one", "two"],
        usernameClaim: "sub",
        usernamePrefix: "corp:",
        groupsClaim: "groups",
        groupsPrefix: "corp:",
      },
      {
        issuer: "https://b.example",
        audiences: ["x"],
        usernameClaim: "email",
        usernamePrefix: "other:",
        groupsClaim: "groups",
        groupsPrefix: "",
      },
    ]);
  });

  it("serves two requests for one issuer with other prefixes and client IDs, each with its own mapping", () => {
    const plan = oidcTrustPlan([
      request("team-b", "2026-01-02T00:00:00Z", { name: "b", issuer: "https://a.example", clientID: "two" }),
      request("team-a", "2026-01-01T00:00:00Z", { name: "a", issuer: "https://a.example", clientID: "one" }),
    ]);
    expect(plan.conflicts.size).toBe(0);
    expect(plan.issuers).toEqual([
      expect.objectContaining({ issuer: "https://a.example", audiences: ["one"], usernamePrefix: "a:" }),
      expect.objectContaining({ issuer: "https://a.example", audiences: ["two"], usernamePrefix: "b:" }),
    ]);
  });

  it("denies a later request for the same issuer and client ID with other prefixes, naming the earlier one", () => {
    const plan = oidcTrustPlan([
      request("late", "2026-01-02T00:00:00Z", { name: "b", issuer: "https://a.example", clientID: "one" }),
      request("early", "2026-01-01T00:00:00Z", { name: "a", issuer: "https://a.example", clientID: "one" }),
    ]);
    expect(plan.issuers).toEqual([expect.objectContaining({ audiences: ["one"], usernamePrefix: "a:" })]);
    expect(plan.conflicts.get("team/late")).toMatch(
      /^issuer https:\/\/a\.example with client ID one is trusted on this cluster for AccessRequest team\/early with user names from claim sub prefixed "a:"/,
    );
    expect(plan.conflicts.has("team/early")).toBe(false);
  });

  it("keeps a Granted request's trust against an older one that was not served yet", () => {
    const plan = oidcTrustPlan([
      request("older", "2026-01-01T00:00:00Z", { name: "a", issuer: "https://a.example", clientID: "one" }),
      request(
        "granted",
        "2026-01-02T00:00:00Z",
        { name: "b", issuer: "https://a.example", clientID: "one" },
        "Granted",
      ),
    ]);
    expect(plan.conflicts.get("team/older")).toContain("AccessRequest team/granted");
    expect(plan.issuers).toEqual([expect.objectContaining({ usernamePrefix: "b:" })]);
  });

  it("leaves out requests whose issuer kube-apiserver would refuse, so they never spoil the others' trust", () => {
    const plan = oidcTrustPlan([
      request("plain", "2026-01-01T00:00:00Z", { issuer: "http://a.example", clientID: "one" }),
      request("good", "2026-01-02T00:00:00Z", { issuer: "https://a.example", clientID: "two" }),
    ]);
    expect(plan.issuers.map((trust) => trust.issuer)).toEqual(["https://a.example"]);
  });

  it(`trusts at most ${MAX_TRUSTED_ISSUERS} issuer URLs and says so to the request beyond`, () => {
    const requests = Array.from({ length: MAX_TRUSTED_ISSUERS + 1 }, (_, i) =>
      request(`r${String(i).padStart(3, "0")}`, "2026-01-01T00:00:00Z", {
        issuer: `https://i${i}.example`,
      }),
    );
    const plan = oidcTrustPlan(requests);
    expect(new Set(plan.issuers.map((trust) => trust.issuer)).size).toBe(MAX_TRUSTED_ISSUERS);
    expect(plan.conflicts.get(`team/r${String(MAX_TRUSTED_ISSUERS).padStart(3, "0")}`)).toContain(
      `trusts ${MAX_TRUSTED_ISSUERS} OIDC issuers already`,
    );
    // One more request for an issuer already trusted still fits.
    const more = oidcTrustPlan([
      ...requests,
      request("z", "2026-01-02T00:00:00Z", { clientID: "z", issuer: "https://i0.example" }),
    ]);
    expect(more.conflicts.has("team/z")).toBe(false);
  });

  it("trusts nothing for token requests or none at all", () => {
    expect(oidcTrustPlan([]).issuers).toEqual([]);
    expect(
      oidcTrustPlan([
        anAccessRequest({
          name: "t",
          namespace: "team",
          token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }] },
        }),
      ]).issuers,
    ).toEqual([]);
  });

  it("serves every request it does not name as a conflict, exactly as asked, in a configuration kube-apiserver accepts", () => {
    const issuers = ["https://a.example", "https://b.example/tenant", "http://plain.example"];
    const oidc = fc.record({
      name: fc.constantFrom("a", "b"),
      issuer: fc.constantFrom(...issuers),
      clientID: fc.constantFrom("one", "two", "three"),
      usernamePrefix: fc.option(fc.constantFrom("", "x"), { nil: undefined }),
      usernameClaim: fc.constantFrom("sub", "email"),
    });
    const requests = fc.uniqueArray(
      fc.record({ name: fc.stringMatching(/^[a-z]{1,3}$/), created: fc.nat(9), granted: fc.boolean(), oidc }),
      { selector: (r) => r.name, maxLength: 8 },
    );
    const counts = { conflicts: 0, sharedIssuer: 0, joinedAudience: 0, invalid: 0 };
    fc.assert(
      fc.property(requests, (entries) => {
        const built = entries.map((e) => {
          const { usernamePrefix, ...rest } = e.oidc;
          return request(
            e.name,
            `2026-01-0${e.created}T00:00:00Z`,
            {
              ...rest,
              ...(usernamePrefix === undefined ? {} : { usernamePrefix }),
            },
            e.granted ? "Granted" : "Pending",
          );
        });
        const plan = oidcTrustPlan(built);
        for (const r of built) {
          const wanted = oidcTrustOf(r.spec.oidc as OidcAccess);
          const served = plan.issuers.some(
            (t) =>
              t.issuer === wanted.issuer &&
              sameMapping(t, wanted) &&
              t.audiences.includes(wanted.audiences[0] ?? ""),
          );
          const conflict = plan.conflicts.has(`team/${r.metadata.name}`);
          if (wanted.issuer.startsWith("http:")) {
            counts.invalid++;
            expect(served || conflict).toBe(false);
          } else {
            expect(served !== conflict).toBe(true); // served exactly as asked, or told why not
          }
          if (conflict) counts.conflicts++;
        }
        for (const t of plan.issuers) {
          const siblings = plan.issuers.filter((o) => o.issuer === t.issuer && o !== t);
          if (siblings.length > 0) counts.sharedIssuer++;
          if (t.audiences.length > 1) counts.joinedAudience++;
          for (const s of siblings) expect(s.audiences.some((a) => t.audiences.includes(a))).toBe(false);
        }
        expect(() => authenticationConfig(plan.issuers)).not.toThrow();
      }),
      { numRuns: 300 },
    );
    // Every interesting branch was reached.
    expect(counts.conflicts).toBeGreaterThan(0);
    expect(counts.sharedIssuer).toBeGreaterThan(0);
    expect(counts.joinedAudience).toBeGreaterThan(0);
    expect(counts.invalid).toBeGreaterThan(0);
  });
});
