/**
 * `openmcp-engine landscape up` on kind, from nothing, as a user runs it (the CLI, its own process): a bootstrap
 * control plane on this machine runs the engine, which makes the platform kind cluster (the host's Docker socket
 * and the state folder mounted into its node); the engine's image and deploy/base go in; the landscape moves there
 * and the bootstrap goes. The engine in its Pod then manages the platform's own Cluster (protected from deletion),
 * serves onboarding and workload with it (the landscape file says they share the platform's cluster) and makes mcp a
 * real sibling kind cluster; a token AccessRequest on mcp's cluster works from a Pod of the platform cluster. (A
 * cluster of its own for each of the four purposes, the default, is landscape-gardener's case, and separate sibling
 * kind clusters per purpose are kind-landscape's: two node boots fewer here.) Killed after the platform step, `up` resumes there; run
 * again at the end, it has nothing to do; `down` leaves no container and no folder.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import { CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { LANDSCAPE_NAMESPACE } from "../../src/cli/landscape/landscape-plan.ts";
import { stopPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { clusterTarget } from "../../src/machines/cluster/step.ts";
import { kindNameOf } from "../../src/providers/kind/names.ts";
import { configMapAnswersFromPod, configMapTokenRequest } from "../support/access-proofs.ts";
import { accessGranted, createAccessRequest } from "../support/access-requests.ts";
import { containersNamed, containerToolchain, removeContainersQuietly, run } from "../support/containers.ts";
import { streamEngineCli } from "../support/processes.ts";
import { stopAtFirstFailure } from "../support/stop-at-first-failure.ts";

const tools = containerToolchain();
const work = mkdtempSync(join(tmpdir(), "landscape-kind-"));
const folder = join(work, "landscape");
const file = join(work, "landscape.yaml");
const NS = LANDSCAPE_NAMESPACE;
/** The kind clusters the landscape made, to remove whatever a failed test left. */
const made = new Set<string>();

writeFileSync(
  file,
  `apiVersion: engine.openmcp.cloud/v1alpha1
kind: Landscape
metadata: {name: heavy}
spec:
  backend: kind
  environment: openmcp
  purposes:
    - name: platform
    - name: onboarding
      cluster: platform
    - name: workload
      cluster: platform
    - name: mcp
`,
);

/** `landscape <args>` of this test's file and folder, as a user runs it (see {@link streamEngineCli}). */
const landscape = (args: readonly string[], props: { killAfter?: string } = {}): Promise<string> =>
  streamEngineCli(["landscape", ...args, "-f", file, "--dir", folder, "--image", tools.engineImage], props);

let platform: { kubeConfig: KubeConfig; kubectl(...args: string[]): Promise<string> };
let custom: CustomObjectsApi;
const read = async <T>(resource: (typeof RESOURCES)[keyof typeof RESOURCES], name: string, namespace = NS) =>
  (await custom.getNamespacedCustomObject({ ...resource, namespace, name })) as T;

afterAll(async () => {
  await removeContainersQuietly(made);
  await stopPersistentControlPlane(join(folder, "bootstrap"), { remove: true }).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}, 300_000);

describe("landscape up on kind, from nothing", { timeout: 1_800_000 }, () => {
  stopAtFirstFailure();
  it("makes a platform kind cluster running the engine, which manages its own Cluster, serves onboarding and workload with it and made mcp a kind cluster; the bootstrap is gone (killed once, resumed)", async () => {
    const started = performance.now();
    // Killed as a crash would, once the platform cluster is made: the bootstrap's control plane runs on.
    const first = await landscape(["up"], { killAfter: "✓ platform" });
    expect(first).not.toContain("is up");
    const out = await landscape(["up"]);
    expect(out).toContain("resuming: bootstrap, platform done before");
    console.log(
      `landscape up on kind: from nothing to two Ready clusters serving four purposes in ${Math.round((performance.now() - started) / 1_000)} s, killed once after the platform step and resumed`,
    );
    expect(out).toContain("Landscape heavy is up");
    expect(existsSync(join(folder, "bootstrap"))).toBe(false);
    const kubeconfigPath = join(folder, "platform.kubeconfig");
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    platform = {
      kubeConfig,
      kubectl: (...args) => run(tools.kubectl, ["--kubeconfig", kubeconfigPath, ...args]),
    };
    custom = kubeConfig.makeApiClient(CustomObjectsApi);

    const deployment = await kubeConfig
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: "openmcp-engine", namespace: "openmcp-engine-system" });
    expect(deployment.status?.readyReplicas).toBeGreaterThanOrEqual(1);

    const own = await read<Cluster>(RESOURCES.Cluster, "platform");
    expect(own.status?.phase).toBe("Ready");
    expect(own.metadata.labels?.[CLUSTER_LABELS.deletionProtection]).toBe("true");
    made.add(kindNameOf(clusterTarget(own, undefined)));
    const granted: Record<string, string> = {};
    for (const purpose of ["platform", "onboarding", "workload", "mcp"]) {
      const request = await read<ClusterRequest>(RESOURCES.ClusterRequest, purpose);
      expect(request.status?.phase, purpose).toBe("Granted");
      const ref = request.status?.cluster;
      granted[purpose] = `${ref?.namespace}/${ref?.name}`;
      const cluster = await read<Cluster>(RESOURCES.Cluster, ref?.name ?? "", ref?.namespace);
      expect(cluster.status?.phase, purpose).toBe("Ready");
      const name = kindNameOf(clusterTarget(cluster, undefined));
      made.add(name);
      expect(await containersNamed(name), purpose).toEqual([`${name}-control-plane`]);
    }
    // onboarding and workload share the platform's Cluster; mcp has its own: two kind clusters.
    expect(granted.onboarding).toBe(granted.platform);
    expect(granted.workload).toBe(granted.platform);
    expect(granted.mcp).not.toBe(granted.platform);
    expect(made.size).toBe(2);
    // Deleting the platform's own Cluster takes an explicit step.
    await expect(
      custom.deleteNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NS,
        name: "platform",
        dryRun: "All",
      }),
    ).rejects.toThrow(/deletion-protection|confirm-deletion/);
  });

  it("grants a token AccessRequest on the mcp cluster, whose kubeconfig works from a Pod of the platform cluster", async () => {
    const mcp = (await read<ClusterRequest>(RESOURCES.ClusterRequest, "mcp")).status?.cluster;
    await createAccessRequest(custom, NS, "mcp", {
      ...configMapTokenRequest({ name: mcp?.name ?? "", namespace: mcp?.namespace ?? NS }),
      clusterRef: undefined,
      requestRef: { name: "mcp", namespace: NS },
    });
    const granted = await accessGranted(custom, NS, "mcp", { timeoutMs: 180_000, intervalMs: 1_000 });
    const secretName = granted.status?.secretRef?.name ?? "";
    expect(
      await platform.kubeConfig
        .makeApiClient(CoreV1Api)
        .readNamespacedSecret({ namespace: NS, name: secretName }),
    ).toBeDefined();
    expect(
      await configMapAnswersFromPod(platform, {
        namespace: NS,
        secretName,
        image: tools.engineImage,
        job: "use-access",
        folder: work,
      }),
    ).toEqual([200, 403, 403]);
  });

  it("resumes with nothing left to do when run again", async () => {
    const out = await landscape(["up"]);
    expect(out).toContain(
      "resuming: bootstrap, platform, engine, move, bootstrap-removed, purposes done before",
    );
    expect(out).toContain("Landscape heavy is up");
  });

  it("landscape down removes every cluster, the platform last, and the landscape's folder", async () => {
    await landscape(["down"]);
    for (const name of made) expect(await containersNamed(name), name).toEqual([]);
    expect(existsSync(folder)).toBe(false);
  });
});
