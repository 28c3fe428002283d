/** The `existing` backend passes the backend conformance kit, bound to a real local control plane. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { VersionApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { JsonObject } from "../../src/api/common.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { createBackend, type ExistingBackend, normaliseVersion } from "../../src/providers/existing.ts";
import { aProviderConfig } from "../support/builders.ts";
import { checkConformanceTimed } from "../support/timed-conformance.ts";

let controlPlane: ControlPlane;
beforeAll(async () => {
  controlPlane = await startControlPlane();
});
afterAll(async () => {
  await controlPlane?.stop();
});

/** Bindings still recorded in the state file. */
async function leftovers(stateDirectory: string): Promise<string[]> {
  let bindings: Array<{ uid: string }> = [];
  try {
    bindings = JSON.parse(readFileSync(join(stateDirectory, "existing.json"), "utf8")).bindings;
  } catch {
    // nothing was ever bound
  }
  return bindings.map((binding) => `binding of ${binding.uid}`);
}

it("passes the conformance kit", async () => {
  const kubeconfig = readFileSync(controlPlane.kubeconfigPath, "utf8");
  const info = await controlPlane.kubeConfig.makeApiClient(VersionApi).getCode();
  const version = normaliseVersion(info.gitVersion) ?? "";
  const settings: JsonObject = { kubeconfigSecretRef: { namespace: "clusters", name: "local" } };
  await checkConformanceTimed("existing", createBackend, {
    numRuns: 20,
    maxCommands: 10,
    readyTimeoutMs: 5_000,
    // The person who wrote the config lists what the cluster runs.
    config: aProviderConfig({
      name: "local-existing",
      backend: "existing",
      settings,
      supportedVersions: [{ version }],
    }),
    context: {
      readSecret: async (namespace, name, key) =>
        namespace === "clusters" && name === "local" && key === "kubeconfig" ? kubeconfig : undefined,
    },
    leftovers,
    liveClusters: (backend: ClusterBackend) => (backend as ExistingBackend).boundCount,
  });
}, 300_000);
