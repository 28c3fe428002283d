/** The simulated backend passes the conformance kit, and the kit catches a backend that breaks the contract. */
import { describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../../src/api/backend-contract.ts";
import { ConformanceError, checkBackendConformance } from "../../../src/providers/conformance.ts";
import { createBackend, SimulatedBackend } from "../../../src/providers/simulated.ts";
import { checkConformanceTimed } from "../../support/timed-conformance.ts";

const liveClusters = (backend: ClusterBackend) => (backend as SimulatedBackend).size;

/** The kit run on `factory`, which must fail it: the ConformanceError, for the test to read. */
async function conformanceFailure(
  factory: Parameters<typeof checkBackendConformance>[0],
  options: Parameters<typeof checkBackendConformance>[1],
): Promise<Error> {
  const failure = await checkBackendConformance(factory, options).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(ConformanceError);
  return failure as Error;
}

describe("the simulated backend", () => {
  it("passes the conformance kit", async () => {
    await checkConformanceTimed("simulated", createBackend, {
      numRuns: 40,
      maxCommands: 12,
      readyTimeoutMs: 2_000,
      context: { options: { delay: "15ms" } },
      liveClusters,
    });
  }, 120_000);
});

describe("the conformance kit", () => {
  it("rejects a backend whose create is not idempotent, with the call sequence that shows it", async () => {
    // A backend that forgets its clusters when restarted, so a create after a restart makes a second one.
    const forgetful = () => {
      const backend = new SimulatedBackend({ provisionDelayMs: 0, updateDelayMs: 0, deleteDelayMs: 0 });
      return backend;
    };
    const failure = await conformanceFailure(forgetful, { numRuns: 100, seed: 42, readyTimeoutMs: 500 });
    const message = failure.message;
    console.log(message);
    expect(message).toMatch(/shortest call sequence found: .*create\(c\d.*restart\(\)/);
    const replay = /replay with \{ seed: 42, path: "([\d:]+)", replayPath: "([^"]+)" \}/.exec(message);
    expect(replay, message).not.toBeNull();
    // Replaying runs just the shrunk sequence, and it fails the same way.
    const [, path, replayPath] = replay as RegExpExecArray;
    const again = await checkBackendConformance(forgetful, {
      seed: 42,
      path: path as string,
      replayPath: replayPath as string,
      readyTimeoutMs: 500,
    }).catch((error: unknown) => error);
    expect((again as Error).message.split("\n").slice(0, 2)).toEqual(message.split("\n").slice(0, 2));
  }, 60_000);

  it("rejects a backend that reports a version it does not offer", async () => {
    const liar = async () => {
      const backend = new SimulatedBackend({ provisionDelayMs: 0 });
      const observe = backend.observe.bind(backend);
      backend.observe = async (target) => {
        const observation = await observe(target);
        return observation.exists ? { ...observation, version: "9.9.9" } : observation;
      };
      return backend;
    };
    const failure = await conformanceFailure(liar, { numRuns: 20, seed: 7, readyTimeoutMs: 500 });
    expect(failure.message).toContain("versions reported are supported: create(c");
    expect(failure.message).toContain("reports 9.9.9");
  }, 60_000);

  it("rejects a backend that hands a cluster over without what the next instance needs to serve it", async () => {
    // Its export gives nothing: the instance a move makes does not know the cluster it must now serve.
    const emptyHanded = async (context: Parameters<typeof createBackend>[0]) =>
      Object.assign(await createBackend({ ...context, options: { delay: "0ms" } }), {
        exportCluster: async () => ({}),
      });
    const failure = await conformanceFailure(emptyHanded, { numRuns: 20, seed: 3, readyTimeoutMs: 500 });
    expect(failure.message).toMatch(/shortest call sequence found: .*move\(\)/);
  }, 60_000);
});
