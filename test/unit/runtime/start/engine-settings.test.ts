/** The options of the programmatic start: defaults as `run` has them, and a message naming a wrong option. */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_LEADER_ELECTION } from "../../../../src/runtime/leadership/leader-election.ts";
import { settingsFromOptions } from "../../../../src/runtime/start/engine-settings.ts";

describe("settingsFromOptions", () => {
  it("fills run's defaults, with the probes off (an embedding program serves its own)", () => {
    expect(settingsFromOptions({ providerName: "acme" })).toMatchObject({
      providerName: "acme",
      environment: "default",
      backend: undefined, // each ProviderConfig chooses among the built-in backends
      concurrency: 4,
      stateDirectory: resolve(".state/engine"),
      logLevel: "info",
      metricsAddress: "0",
      healthAddress: "0",
      schedule: true,
      prepareAccessRequests: true,
      tokenValidityMs: 86_400_000,
      leaderElection: undefined,
      sharding: undefined,
    });
  });

  it("names the Lease after the provider and takes the default timings", () => {
    expect(
      settingsFromOptions({ providerName: "acme", leaderElection: { namespace: "ops" } }).leaderElection,
    ).toEqual({
      namespace: "ops",
      name: "acme.engine.openmcp.cloud",
      timing: DEFAULT_LEADER_ELECTION,
    });
  });

  it.each([
    [{ providerName: "Acme" }, 'providerName "Acme" must be a DNS label'],
    [{ providerName: "acme", environment: "a_b" }, 'environment "a_b" must be a DNS label'],
    [{ providerName: "acme", concurrency: 0 }, "concurrency 0 must be a whole number from 1 to 64"],
    [{ providerName: "acme", tokenValidityMs: 1_000 }, "tokenValidityMs must be at least 600000"],
    [
      { providerName: "acme", leaderElection: { namespace: "a" }, sharding: { namespace: "a" } },
      "leaderElection and sharding exclude each other",
    ],
  ])("refuses %j", (options, message) => {
    expect(() => settingsFromOptions(options)).toThrow(message);
  });
});
