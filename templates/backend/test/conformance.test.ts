/** The backend contract as an executable test: random call sequences, restarts and faults, shrunk on failure. */
import { test } from "node:test";
import { checkBackendConformance } from "openmcp-engine/conformance";
import * as backendModule from "../src/index.ts";

test("__PACKAGE_NAME__ passes the backend conformance kit", { timeout: 300_000 }, async () => {
  await checkBackendConformance(backendModule, {
    numRuns: 30,
    context: { options: { readyAfterMs: "20" } },
    // One cluster per Cluster object: the kit counts what the infrastructure holds after every call.
    liveClusters: (backend) => (backend as backendModule.__CLASS_NAME__).cloud.list(Date.now()).length,
  });
});
