/**
 * `openmcp-engine landscape up` on gardener, from nothing, as a user runs it (the CLI, its own process), against
 * Gardener's own API server (the gardenlet SIMULATED: each Shoot a real local control plane with no nodes). A
 * bootstrap control plane runs the engine, which orders the platform Shoot; the CRDs and the garden's Secret go into
 * the platform cluster, the engine runs as a process of this machine against it (no nodes for a Pod, and it says
 * so), the landscape moves there and the bootstrap goes. That engine then manages the platform's own Cluster and
 * orders onboarding, workload and mcp as Shoots for ClusterRequests; a token AccessRequest on mcp's cluster works.
 * `down` leaves no Shoot, no engine process and no folder.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import { CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { LANDSCAPE_NAMESPACE } from "../../src/cli/landscape/landscape-plan.ts";
import { stopPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { type Garden, startGarden } from "../../src/dev/gardener-apiserver.ts";
import { applyCloudProfile, CORE, createProject } from "../../src/dev/gardener-garden-objects.ts";
import { SimulatedGardenlet } from "../../src/dev/gardener-simulated-gardenlet.ts";
import {
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  issuedKubeconfig,
} from "../support/access-proofs.ts";
import { accessGranted, createAccessRequest } from "../support/access-requests.ts";
import { isAlive, streamEngineCli } from "../support/processes.ts";

const NS = LANDSCAPE_NAMESPACE;
const work = mkdtempSync(join(tmpdir(), "landscape-gardener-"));
const folder = join(work, "landscape");
const file = join(work, "landscape.yaml");
let garden: Garden;
let gardenlet: SimulatedGardenlet;

beforeAll(async () => {
  garden = await startGarden();
  await applyCloudProfile(garden.kubeConfig, "local", [{ version: "1.35.1", classification: "supported" }]);
  await createProject(garden.kubeConfig, "landscape");
  gardenlet = new SimulatedGardenlet({ kubeConfig: garden.kubeConfig });
  writeFileSync(join(work, "garden.kubeconfig"), readFileSync(garden.kubeconfigPath, "utf8"));
  writeFileSync(
    file,
    `apiVersion: engine.openmcp.cloud/v1alpha1
kind: Landscape
metadata: {name: garden}
spec:
  backend: gardener
  environment: openmcp
  providerConfig:
    spec:
      settings:
        kubeconfigSecretRef: {namespace: ${NS}, name: garden}
        project: landscape
        shootTemplate: {spec: {cloudProfile: {name: local}, region: local, provider: {type: local}}}
  secrets:
    - {name: garden, files: {kubeconfig: garden.kubeconfig}}
`,
  );
}, 300_000);

afterAll(async () => {
  const pid = Number(readFileSyncOr(join(folder, "engine.pid")));
  if (pid > 0 && isAlive(pid)) process.kill(-pid, "SIGKILL");
  await stopPersistentControlPlane(join(folder, "bootstrap"), { remove: true }).catch(() => undefined);
  await gardenlet?.stop();
  await garden?.stop();
  rmSync(work, { recursive: true, force: true });
}, 300_000);

function readFileSyncOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** `landscape <args>` of this test's file and folder, as a user runs it (see {@link streamEngineCli}). */
const landscape = (args: readonly string[]): Promise<string> =>
  streamEngineCli(["landscape", ...args, "-f", file, "--dir", folder], { timeoutMs: 900_000 });

const shoots = async () =>
  (
    (await garden.kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
      ...CORE,
      plural: "shoots",
    })) as { items: Array<{ metadata: { name: string } }> }
  ).items.map((shoot) => shoot.metadata.name);

let custom: CustomObjectsApi;
let platform: KubeConfig;
const read = async <T>(resource: (typeof RESOURCES)[keyof typeof RESOURCES], name: string, namespace = NS) =>
  (await custom.getNamespacedCustomObject({ ...resource, namespace, name })) as T;

describe("landscape up on gardener, from nothing", { timeout: 1_200_000 }, () => {
  it("orders the platform Shoot, runs the engine against it as a process, which manages its own Cluster and ordered onboarding, workload and mcp as Shoots; the bootstrap is gone", async () => {
    const started = performance.now();
    const out = await landscape(["up"]);
    console.log(
      `landscape up on gardener: from nothing to four Ready clusters in ${Math.round((performance.now() - started) / 1_000)} s`,
    );
    expect(out).toContain("Landscape garden is up");
    expect(out).toContain("it runs as a process of this machine against the platform cluster");
    expect(existsSync(join(folder, "bootstrap"))).toBe(false);
    expect(isAlive(Number(readFileSync(join(folder, "engine.pid"), "utf8")))).toBe(true);
    platform = new KubeConfig();
    platform.loadFromFile(join(folder, "platform.kubeconfig"));
    custom = platform.makeApiClient(CustomObjectsApi);
    const own = await read<Cluster>(RESOURCES.Cluster, "platform");
    expect(own.status?.phase).toBe("Ready");
    expect(own.metadata.labels?.[CLUSTER_LABELS.deletionProtection]).toBe("true");
    for (const purpose of ["platform", "onboarding", "workload", "mcp"]) {
      const request = await read<ClusterRequest>(RESOURCES.ClusterRequest, purpose);
      expect(request.status?.phase, purpose).toBe("Granted");
      const ref = request.status?.cluster;
      expect((await read<Cluster>(RESOURCES.Cluster, ref?.name ?? "", ref?.namespace)).status?.phase).toBe(
        "Ready",
      );
    }
    // platform, onboarding, workload, mcp: four Shoots.
    expect(await shoots()).toHaveLength(4);
  });

  it("grants a token AccessRequest on the mcp cluster through the engine process", async () => {
    const mcp = (await read<ClusterRequest>(RESOURCES.ClusterRequest, "mcp")).status?.cluster;
    await createAccessRequest(
      custom,
      NS,
      "mcp",
      configMapTokenRequest({ name: mcp?.name ?? "", namespace: mcp?.namespace ?? NS }),
    );
    const granted = await accessGranted(custom, NS, "mcp", { timeoutMs: 120_000, intervalMs: 1_000 });
    const { kubeConfig: access } = await issuedKubeconfig(
      platform.makeApiClient(CoreV1Api),
      NS,
      granted.status?.secretRef?.name ?? "",
    );
    await expectConfigMapAccessOnly(access);
  });

  it("landscape down deletes every Shoot, the platform's last, stops the engine process and removes the folder", async () => {
    const pid = Number(readFileSync(join(folder, "engine.pid"), "utf8"));
    await landscape(["down"]);
    expect(await shoots()).toEqual([]);
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(folder)).toBe(false);
  });
});
