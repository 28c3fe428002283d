/** Which OIDC issuers kube-apiserver would refuse in its authentication configuration (mirrored before anything is written). */
import { describe, expect, it } from "vitest";
import { oidcIssuerProblem } from "../../../../src/machines/access-request/oidc-issuer.ts";

describe("oidcIssuerProblem", () => {
  it("accepts https issuers with a host, a port and a path", () => {
    for (const issuer of [
      "https://issuer.example",
      "https://127.0.0.1:8443",
      "https://login.example/tenant/v2.0",
      "https://login.example/",
    ]) {
      expect(oidcIssuerProblem(issuer), issuer).toBeUndefined();
    }
  });

  it.each([
    ["http://issuer.example", "is not an https:// URL"],
    ["HTTPS://issuer.example", "is not an https:// URL"],
    ["https://issuer.example?tenant=a", "must not contain a query"],
    ["https://issuer.example/?", "must not contain a query"],
    ["https://issuer.example#a", "must not contain a fragment"],
    ["https://user:secret@issuer.example", "must not contain a user name or password"],
    ["https://@issuer.example", "must not contain a user name or password"],
    ["https://issuer.example/a b", "contains a space or a control character"],
    ["https://issuer.example/\n", "contains a space or a control character"],
    ["https://issuer.example:port", "is not a valid URL"],
    ["https://issuer.example/%zz", "not followed by two hex digits"],
    ["https:///path", "has no host"],
    ["", "is empty"],
  ])("refuses %j: %s", (issuer, problem) => {
    expect(oidcIssuerProblem(issuer)).toContain(problem);
  });

  it("refuses the target cluster's own service-account issuer", () => {
    expect(oidcIssuerProblem("https://kubernetes.default.svc", ["https://kubernetes.default.svc"])).toContain(
      "service-account issuer",
    );
  });
});
