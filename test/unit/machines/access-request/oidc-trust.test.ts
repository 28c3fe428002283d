/** Which issuers a cluster must trust for the OIDC AccessRequests that target it: one per issuer, audiences merged, conflicts named. */
import { describe, expect, it } from "vitest";
import type { AccessRequest, OidcAccess } from "../../../../src/api/access-request.ts";
import { oidcTrustPlan } from "../../../../src/machines/access-request/oidc-trust.ts";
import { anOidcAccess } from "../../../support/access-fixtures.ts";
import { anAccessRequest } from "../../../support/builders.ts";

const request = (name: string, created: string, oidc: Partial<OidcAccess>): AccessRequest => {
  const built = anAccessRequest({ name, namespace: "team", oidc: anOidcAccess(oidc) });
  return { ...built, metadata: { ...built.metadata, creationTimestamp: created } };
};

describe("oidcTrustPlan", () => {
  it("trusts each issuer once, with every client ID as an audience and the request's claims and prefixes", () => {
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

  it("names a later request that wants the same issuer with other prefixes, and keeps the first one's", () => {
    const plan = oidcTrustPlan([
      request("late", "2026-01-02T00:00:00Z", { name: "b", issuer: "https://a.example", clientID: "two" }),
      request("early", "2026-01-01T00:00:00Z", { name: "a", issuer: "https://a.example", clientID: "one" }),
    ]);
    expect(plan.issuers).toEqual([expect.objectContaining({ audiences: ["one"], usernamePrefix: "a:" })]);
    expect(plan.conflicts.get("team/late")).toContain("AccessRequest team/early");
    expect(plan.conflicts.has("team/early")).toBe(false);
  });

  it("trusts nothing for token requests or none at all", () => {
    expect(oidcTrustPlan([]).issuers).toEqual([]);
    expect(
      oidcTrustPlan([anAccessRequest({ name: "t", namespace: "team", token: { permissions: [] } })]).issuers,
    ).toEqual([]);
  });
});
