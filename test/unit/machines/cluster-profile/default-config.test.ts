/** The ProviderConfig `init` makes when nobody applied one, as openMCP's bootstrapper deploys a provider. */
import { describe, expect, it } from "vitest";
import { PROVIDER_CONFIG_ANNOTATIONS } from "../../../../src/api/constants/provider-config.ts";
import {
  type DefaultConfigInput,
  defaultProviderConfig,
} from "../../../../src/machines/cluster-profile/default-config.ts";
import { BUILT_IN_BACKENDS } from "../../../../src/providers/registry.ts";
import { aProviderConfig } from "../../../support/builders.ts";

/** Provider `kind` deployed without --backend (every built-in backend served), no ProviderConfig, no variables. */
function given(overrides: Partial<DefaultConfigInput> = {}): DefaultConfigInput {
  return {
    owner: { providerName: "kind", environment: "openmcp", backends: BUILT_IN_BACKENDS },
    backendFlag: undefined,
    builtIns: BUILT_IN_BACKENDS,
    configs: [],
    env: {},
    ...overrides,
  };
}

const made = (input: DefaultConfigInput) => {
  const decision = defaultProviderConfig(input);
  if (!("make" in decision)) throw new Error(`expected a config, got: ${decision.skip}`);
  return decision.make;
};

describe("defaultProviderConfig", () => {
  it("makes config `kind` publishing profile `kind` with backend kind for provider kind, marked as init's", () => {
    expect(made(given())).toEqual({
      apiVersion: "engine.openmcp.cloud/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "kind", annotations: { [PROVIDER_CONFIG_ANNOTATIONS.madeBy]: "init" } },
      spec: { providerRef: { name: "kind" }, profileName: "kind", backend: "kind" },
    });
  });

  it("takes the backend from --backend when it is built-in, else from the variable, else from the provider name", () => {
    expect(
      made(given({ backendFlag: "simulated", env: { OPENMCP_ENGINE_DEFAULT_BACKEND: "local" } })).spec
        .backend,
    ).toBe("simulated");
    expect(made(given({ env: { OPENMCP_ENGINE_DEFAULT_BACKEND: "local" } })).spec.backend).toBe("local");
    const ownModule = given({
      owner: { providerName: "mine", environment: "openmcp", backends: ["mine"] },
      backendFlag: "./my-backend.ts",
      env: { OPENMCP_ENGINE_DEFAULT_BACKEND: "mine" },
    });
    expect(made(ownModule).spec).toEqual({
      providerRef: { name: "mine" },
      profileName: "mine",
      backend: "mine",
    });
    for (const provider of ["local", "simulated"]) {
      const input = given({
        owner: { providerName: provider, environment: "e", backends: BUILT_IN_BACKENDS },
      });
      expect(made(input).spec.backend).toBe(provider);
    }
  });

  it("makes none for a provider whose name is no settings-free built-in backend, saying to set the variable", () => {
    for (const provider of ["gardener", "existing", "my-provider"]) {
      const decision = defaultProviderConfig(
        given({ owner: { providerName: provider, environment: "e", backends: BUILT_IN_BACKENDS } }),
      );
      expect(decision).toEqual({ skip: expect.stringContaining("set OPENMCP_ENGINE_DEFAULT_BACKEND") });
    }
  });

  it("makes none whose backend this engine does not run", () => {
    const decision = defaultProviderConfig(
      given({ owner: { providerName: "kind", environment: "e", backends: ["simulated"] } }),
    );
    expect(decision).toEqual({ skip: expect.stringContaining('backend "kind" is not one this engine runs') });
  });

  it("names the profile by OPENMCP_ENGINE_DEFAULT_PROFILE when set", () => {
    expect(made(given({ env: { OPENMCP_ENGINE_DEFAULT_PROFILE: "kind.local" } })).spec.profileName).toBe(
      "kind.local",
    );
    expect(() =>
      defaultProviderConfig(given({ env: { OPENMCP_ENGINE_DEFAULT_PROFILE: "Not_A_Name" } })),
    ).toThrow('OPENMCP_ENGINE_DEFAULT_PROFILE "Not_A_Name" must be a DNS-1123 subdomain');
  });

  it("makes none when OPENMCP_ENGINE_DEFAULT_CONFIG is false, and refuses values other than true and false", () => {
    expect(defaultProviderConfig(given({ env: { OPENMCP_ENGINE_DEFAULT_CONFIG: "false" } }))).toEqual({
      skip: expect.stringContaining("OPENMCP_ENGINE_DEFAULT_CONFIG is false"),
    });
    expect("make" in defaultProviderConfig(given({ env: { OPENMCP_ENGINE_DEFAULT_CONFIG: "TRUE" } }))).toBe(
      true,
    );
    expect(() => defaultProviderConfig(given({ env: { OPENMCP_ENGINE_DEFAULT_CONFIG: "no" } }))).toThrow(
      'OPENMCP_ENGINE_DEFAULT_CONFIG takes true or false, not "no"',
    );
  });

  it("makes none when a ProviderConfig is ours or ours to claim, but one when all are another provider's", () => {
    const ours = aProviderConfig({ name: "custom", backend: "kind", providerRef: { name: "kind" } });
    const claimable = aProviderConfig({ name: "free", backend: "kind" });
    const theirs = aProviderConfig({ name: "theirs", backend: "kind", providerRef: { name: "other" } });
    expect(defaultProviderConfig(given({ configs: [theirs, ours] }))).toEqual({
      skip: expect.stringContaining("ProviderConfigs of this provider exist (custom)"),
    });
    expect(defaultProviderConfig(given({ configs: [claimable] }))).toEqual({
      skip: expect.stringContaining("(free)"),
    });
    expect(made(given({ configs: [theirs] })).metadata.name).toBe("kind");
  });
});
