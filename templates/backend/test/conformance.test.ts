/** The backend contract as an executable test: random call sequences, restarts and faults, shrunk on failure. */
import { test } from "node:test";
import { checkBackendConformance } from "openmcp-engine/conformance";
import * as backendModule from "../src/index.ts";

/** Sequences to try: `CONFORMANCE_RUNS=50 npm test` for a deeper check (each run makes and removes real clusters). */
const numRuns = Number(process.env.CONFORMANCE_RUNS ?? 10);

test("__PACKAGE_NAME__ passes the backend conformance kit", { timeout: 3_600_000 }, async () => {
  await checkBackendConformance(backendModule, {
    // Sized for real infrastructure, where a cluster takes minutes: few sequences of few calls, and a long wait
    // for "eventually ready" and "eventually gone" (a stand-in that is fast never waits that long).
    numRuns,
    maxCommands: 8,
    readyTimeoutMs: 15 * 60_000,
    context: { options: { readyAfterMs: "20" } },
    // One cluster per Cluster object: the kit counts what the infrastructure holds after every call.
    liveClusters: (backend) => (backend as backendModule.__CLASS_NAME__).cloud.list(Date.now()).length,
  });
});
