/** The simulated backend keeps warm pools by the contract (1.5), through restarts at every step; a forgetful one is caught. */
import { describe, expect, it } from "vitest";
import { ConformanceError } from "../../../src/providers/conformance.ts";
import { checkPoolConformance } from "../../../src/providers/conformance-pools.ts";
import { createBackend, SimulatedBackend } from "../../../src/providers/simulated.ts";

describe("the simulated backend's pools", () => {
  it("pass the pool conformance check, sleeping members too", async () => {
    await checkPoolConformance(createBackend, {
      readyTimeoutMs: 2_000,
      context: { options: { delay: "15ms" } },
      sleepingMembers: true,
    });
  }, 30_000);

  it("are caught when the backend forgets its bindings on a restart", async () => {
    const forgetful = () => new SimulatedBackend({ provisionDelayMs: 0, deleteDelayMs: 0 });
    const failure = await checkPoolConformance(forgetful, { readyTimeoutMs: 300 }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toMatch(/^pool members are listed/);
  });

  it("are caught by the check for a backend that keeps its records at the infrastructure: the simulated one keeps them in its folder", async () => {
    const failure = await checkPoolConformance(createBackend, {
      readyTimeoutMs: 300,
      emptyStateOnRestart: true,
      context: { options: { delay: "15ms" } },
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toMatch(/^pool members are listed/);
  });
});
