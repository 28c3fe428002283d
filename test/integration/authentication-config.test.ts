/**
 * The authentication configuration the engine writes, checked by kube-apiserver's own code (hack/authn-check):
 * every issuer we let through is accepted, and with several requests on one issuer each token's audience
 * picks that request's claims and prefixes.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { OidcTrust } from "../../src/api/backend-contract.ts";
import { oidcIssuerProblem } from "../../src/machines/access-request/oidc-issuer.ts";
import { sameMapping } from "../../src/machines/access-request/oidc-trust.ts";
import { authenticationConfig } from "../../src/providers/shared/authentication-config.ts";
import { authnCheck, authnCheckTool } from "../support/authn-check.ts";

let tool: string;
beforeAll(async () => {
  tool = await authnCheckTool();
}, 600_000);

const config = (issuers: readonly OidcTrust[]) => parse(authenticationConfig(issuers)) as unknown;
const trust = (issuer: string, overrides: Partial<OidcTrust> = {}): OidcTrust => ({
  issuer,
  audiences: ["a"],
  usernameClaim: "sub",
  usernamePrefix: "p:",
  groupsClaim: "groups",
  groupsPrefix: "p:",
  ...overrides,
});

describe("issuers", () => {
  it("every issuer oidcIssuerProblem lets through is one kube-apiserver accepts", async () => {
    const issuer = fc
      .tuple(
        fc.constantFrom("https://", "http://", "HTTPS://", "", "https:/"),
        fc.constantFrom(
          "issuer.example",
          "127.0.0.1:8443",
          "",
          "u@h.example",
          "u:p@h.example",
          "h.example:port",
          "[::1]:1",
        ),
        fc.constantFrom("", "/", "/t/v2.0", "/a b", "?q=1", "/?", "#f", "/#", "/%zz", "/\n", "/ü"),
      )
      .map((parts) => parts.join(""));
    const seen = { ours: 0, refusedByUs: 0, refusedByBoth: 0 };
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(issuer, { minLength: 1, maxLength: 6 }), async (issuers) => {
        const ours = issuers.filter((url) => oidcIssuerProblem(url) === undefined);
        const raw = {
          apiVersion: "apiserver.config.k8s.io/v1",
          kind: "AuthenticationConfiguration",
          jwt: issuers.map((url) => ({
            issuer: { url, audiences: ["a"] },
            claimMappings: { username: { claim: "sub", prefix: "" } },
          })),
        };
        const results = await authnCheck(tool, [
          { config: config(ours.map((url) => trust(url))) },
          ...issuers.map((url) => ({ config: { ...raw, jwt: raw.jwt.filter((j) => j.issuer.url === url) } })),
        ]);
        expect(results[0]).toEqual({}); // what we would write is accepted
        for (const [i, url] of issuers.entries()) {
          const refusedByUs = oidcIssuerProblem(url) !== undefined;
          if (!refusedByUs) seen.ours++;
          else if (results[i + 1]?.error) seen.refusedByBoth++;
          else seen.refusedByUs++;
          // kube-apiserver refuses nothing we let through
          if (results[i + 1]?.error)
            expect(refusedByUs, `${JSON.stringify(url)}: ${results[i + 1]?.error}`).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
    expect(seen.ours).toBeGreaterThan(0);
    expect(seen.refusedByBoth).toBeGreaterThan(0);
  }, 120_000);
});

describe("several requests on one issuer", () => {
  const text = fc.string({
    unit: fc.constantFrom("a", "b", ":", '"', "\\", "'", "ü", " ", "$", "{"),
    maxLength: 5,
  });
  const claimName = fc.constantFrom(
    "sub",
    "email",
    "preferred-username",
    "https://x.example/groups",
    "a.b",
    'q"x',
    "groups",
    "roles",
  );
  const mapping = fc.record({
    usernameClaim: claimName,
    usernamePrefix: text,
    groupsClaim: claimName,
    groupsPrefix: text,
  });
  const entries = fc
    .uniqueArray(fc.record({ audience: text.filter((a) => a !== ""), mapping }), {
      minLength: 2,
      maxLength: 4,
      selector: (e) => e.audience,
    })
    .map((list) =>
      list.map(
        ({ audience, mapping }): OidcTrust => ({
          issuer: "https://issuer.example",
          audiences: [audience],
          ...mapping,
        }),
      ),
    )
    .filter((list) => list.some((t) => !sameMapping(t, list[0] as OidcTrust)));

  it("maps each token by the entry of its audience, with that entry's claims and prefixes", async () => {
    const seen = { listAudience: 0, listGroups: 0, stringGroups: 0, noGroups: 0, unverifiedEmail: 0 };
    await fc.assert(
      fc.asyncProperty(
        entries,
        fc.nat(),
        fc.boolean(),
        fc.constantFrom("list", "string", "absent"),
        fc.option(fc.boolean(), { nil: undefined }),
        text,
        async (issuers, pick, audienceAsList, groupsShape, emailVerified, value) => {
          const chosen = issuers[pick % issuers.length] as OidcTrust;
          const audience = chosen.audiences[0] as string;
          const claims: Record<string, unknown> = {
            aud: audienceAsList ? ["someone-else", audience] : audience,
            sub: `s${value}`,
            email: `e${value}`,
            "preferred-username": `u${value}`,
            "https://x.example/groups": `h${value}`,
            "a.b": `d${value}`,
            'q"x': `q${value}`,
            roles: `r${value}`,
            ...(emailVerified === undefined ? {} : { email_verified: emailVerified }),
          };
          if (groupsShape === "absent") delete claims[chosen.groupsClaim];
          else claims[chosen.groupsClaim] = groupsShape === "list" ? [`g${value}`, "x"] : `g${value}`;
          const [result] = await authnCheck(tool, [{ config: config(issuers), claims }]);
          expect(result?.error).toBeUndefined();
          const userValue = claims[chosen.usernameClaim];
          const unverified = chosen.usernameClaim === "email" && emailVerified === false;
          if (typeof userValue === "string") {
            // An unverified email maps to no name, which the JWT authenticator refuses, as it does without CEL.
            expect(result?.username).toBe(unverified ? "" : `${chosen.usernamePrefix}${userValue}`);
          }
          const groupsValue = claims[chosen.groupsClaim];
          const expected =
            groupsValue === undefined
              ? []
              : (Array.isArray(groupsValue) ? groupsValue : [groupsValue]).map(
                  (g) => `${chosen.groupsPrefix}${g}`,
                );
          expect(result?.groups).toEqual(expected);
          if (audienceAsList) seen.listAudience++;
          if (unverified) seen.unverifiedEmail++;
          if (groupsValue === undefined) seen.noGroups++;
          else if (Array.isArray(groupsValue)) seen.listGroups++;
          else seen.stringGroups++;
        },
      ),
      { numRuns: 150 },
    );
    for (const [branch, count] of Object.entries(seen)) expect(count, branch).toBeGreaterThan(0);
  }, 120_000);
});
