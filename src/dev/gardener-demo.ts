/**
 * The gardener backend's demo garden (`npm start -- --backend gardener`): Gardener's own API server aggregated on a
 * kube-apiserver, a CloudProfile and a project like provider-local's, a SIMULATED gardenlet that makes each Shoot a
 * real local control plane, and the garden's kubeconfig as a Secret on the management cluster, where the demo's
 * ProviderConfig points.
 */
import { readFile } from "node:fs/promises";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { isConflict } from "../api/error-message.ts";
import { type Garden, startGarden } from "./gardener-apiserver.ts";
import { applyCloudProfile, createProject } from "./gardener-garden-objects.ts";
import { SimulatedGardenlet } from "./gardener-simulated-gardenlet.ts";

/** Where the demo ProviderConfig finds the garden (examples/demo-gardener). */
export const DEMO_GARDEN_SECRET = { namespace: "demo", name: "garden", key: "kubeconfig" } as const;

/** A running demo garden; {@link GardenerDemo.stop} ends the gardenlet's control planes and the garden. */
export interface GardenerDemo {
  readonly garden: Garden;
  readonly gardenlet: SimulatedGardenlet;
  stop(): Promise<void>;
}

/**
 * Starts the garden (CloudProfile `local` offering 1.35.1, 1.34.2 and the deprecated 1.33.9; project `demo`), the
 * simulated gardenlet, and writes the garden's kubeconfig to Secret `demo/garden` of the management cluster.
 */
export async function startGardenerDemo(
  management: KubeConfig,
  log: (message: string) => void = () => {},
): Promise<GardenerDemo> {
  const garden = await startGarden({ log });
  try {
    await applyCloudProfile(garden.kubeConfig, "local", [
      { version: "1.35.1", classification: "supported" },
      { version: "1.34.2", classification: "supported" },
      { version: "1.33.9", classification: "deprecated" },
      { version: "1.36.0", classification: "preview" },
    ]);
    await createProject(garden.kubeConfig, "demo");
    const core = management.makeApiClient(CoreV1Api);
    await core
      .createNamespace({ body: { metadata: { name: DEMO_GARDEN_SECRET.namespace } } })
      .catch((error) => {
        if (!isConflict(error)) throw error;
      });
    await core.createNamespacedSecret({
      namespace: DEMO_GARDEN_SECRET.namespace,
      body: {
        metadata: { name: DEMO_GARDEN_SECRET.name },
        stringData: { [DEMO_GARDEN_SECRET.key]: await readFile(garden.kubeconfigPath, "utf8") },
      },
    });
  } catch (error) {
    await garden.stop();
    throw error;
  }
  const gardenlet = new SimulatedGardenlet({ kubeConfig: garden.kubeConfig });
  log(
    `garden: gardener-apiserver ${garden.gardenerVersion} (pid ${garden.gardenerApiServer.pid}) on ${garden.controlPlane.server}, a simulated gardenlet; kubeconfig in Secret ${DEMO_GARDEN_SECRET.namespace}/${DEMO_GARDEN_SECRET.name}`,
  );
  return {
    garden,
    gardenlet,
    stop: async () => {
      await gardenlet.stop();
      await garden.stop();
    },
  };
}
