/** The authentication configuration file: one JWT authenticator per issuer URL, mappings chosen by audience, never one kube-apiserver refuses. */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { OidcTrust } from "../../../../src/api/backend-contract.ts";
import { authenticationConfig } from "../../../../src/providers/shared/authentication-config.ts";

const trust = (overrides: Partial<OidcTrust>): OidcTrust => ({
  issuer: "https://issuer.example",
  audiences: ["one"],
  usernameClaim: "sub",
  usernamePrefix: "a:",
  groupsClaim: "groups",
  groupsPrefix: "a:",
  ...overrides,
});

interface Written {
  jwt: {
    issuer: { url: string; audiences: string[]; audienceMatchPolicy?: string };
    claimMappings: {
      username: { claim?: string; prefix?: string; expression?: string };
      groups: { claim?: string; prefix?: string; expression?: string };
    };
  }[];
}

const written = (issuers: readonly OidcTrust[]) => parse(authenticationConfig(issuers)) as Written;

describe("authenticationConfig", () => {
  it("writes plain claim mappings for an issuer with one mapping", () => {
    const config = written([trust({}), trust({ audiences: ["two"] })]);
    expect(config.jwt).toEqual([
      {
        issuer: { url: "https://issuer.example", audiences: ["one", "two"], audienceMatchPolicy: "MatchAny" },
        claimMappings: {
          username: { claim: "sub", prefix: "a:" },
          groups: { claim: "groups", prefix: "a:" },
        },
        userValidationRules: [
          expect.objectContaining({ expression: "!user.username.startsWith('system:')" }),
          expect.objectContaining({ expression: "user.groups.all(group, !group.startsWith('system:'))" }),
        ],
      },
    ]);
  });

  it("writes one authenticator for an issuer with two mappings, choosing the prefix by audience in CEL", () => {
    const config = written([
      trust({}),
      trust({ audiences: ["two"], usernamePrefix: "b:", groupsPrefix: "", usernameClaim: "email" }),
    ]);
    expect(config.jwt).toHaveLength(1);
    const [only] = config.jwt;
    expect(only?.issuer).toEqual({
      url: "https://issuer.example",
      audiences: ["one", "two"],
      audienceMatchPolicy: "MatchAny",
    });
    expect(only?.claimMappings.username).toEqual({
      expression:
        '((type(claims.aud) == string ? claims.aud == "one" : "one" in claims.aud)) ? "a:" + claims["sub"] : ' +
        '(claims.?email_verified.orValue(true) == true ? "b:" + claims.email : "")',
    });
    expect(only?.claimMappings.groups.expression).toContain('dyn(claims["groups"]).map(g, "a:" + g)');
    expect(only?.claimMappings.groups.expression).toContain('dyn(claims["groups"]).map(g, "" + g)');
  });

  it("quotes claims, prefixes and client IDs as CEL string literals", () => {
    const config = written([
      trust({ audiences: ['q"\\'] }),
      trust({ audiences: ["two"], usernamePrefix: 'p"' }),
    ]);
    expect(config.jwt[0]?.claimMappings.username.expression).toContain('"q\\"\\\\"');
    expect(config.jwt[0]?.claimMappings.username.expression).toContain('"p\\""');
  });

  it.each([
    [[trust({ issuer: "http://issuer.example" })], "is not an https:// URL"],
    [[trust({ audiences: [] })], "needs at least one audience"],
    [[trust({}), trust({ usernamePrefix: "b:" })], "two mappings for one audience"],
    [
      Array.from({ length: 65 }, (_, i) => trust({ issuer: `https://i${i}.example` })),
      "more than the 64 kube-apiserver accepts",
    ],
  ])("refuses, writing nothing, what kube-apiserver would refuse (%#: %s)", (issuers, problem) => {
    expect(() => authenticationConfig(issuers)).toThrow(problem);
  });

  it("refuses a certificate authority without a PEM certificate", () => {
    expect(() => authenticationConfig([trust({})], "not a certificate")).toThrow("holds no PEM certificate");
    expect(() =>
      authenticationConfig([trust({})], "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"),
    ).toThrow("does not parse");
  });
});
