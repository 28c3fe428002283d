/** Which engine a ProviderConfig belongs to: the one it names; one naming none goes to an engine of its backend, which claims it. */
import { describe, expect, it } from "vitest";
import { claimOperations, configOwnership } from "../../../../src/machines/cluster-profile/ownership.ts";
import type { ProfileOwner } from "../../../../src/machines/cluster-profile/profile.ts";
import { applied } from "../../../../src/machines/shared/json-patch.ts";
import { aProviderConfig } from "../../../support/builders.ts";

const alpha: ProfileOwner = { providerName: "alpha", environment: "dev", backends: ["simulated"] };

describe("configOwnership", () => {
  it.each([
    { case: "names us, our backend", providerRef: "alpha", backend: "simulated", expected: "ours" },
    {
      case: "names us, another backend (ours to report on)",
      providerRef: "alpha",
      backend: "local",
      expected: "ours",
    },
    {
      case: "names another provider, our backend",
      providerRef: "beta",
      backend: "simulated",
      expected: "foreign",
    },
    {
      case: "names another provider and backend",
      providerRef: "beta",
      backend: "local",
      expected: "foreign",
    },
    {
      case: "names no provider, our backend",
      providerRef: undefined,
      backend: "simulated",
      expected: "claimable",
    },
    {
      case: "names no provider, another backend",
      providerRef: undefined,
      backend: "local",
      expected: "foreign",
    },
  ])("a config that $case is $expected", ({ providerRef, backend, expected }) => {
    const config = aProviderConfig({
      backend,
      ...(providerRef ? { providerRef: { name: providerRef } } : {}),
    });

    expect(configOwnership(config, alpha)).toBe(expected);
  });
});

describe("claimOperations", () => {
  it("set spec.providerRef to our name, which makes the config ours", () => {
    const config = aProviderConfig({ backend: "simulated" });

    const claimed = applied(config, claimOperations(alpha));

    expect(claimed.spec.providerRef).toEqual({ name: "alpha" });
    expect(configOwnership(claimed, alpha)).toBe("ours");
    expect(configOwnership(claimed, { ...alpha, providerName: "beta" })).toBe("foreign");
  });
});
