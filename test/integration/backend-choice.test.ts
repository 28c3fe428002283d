/**
 * The backend chosen by the ProviderConfigs, as openMCP deploys a provider (`run` with no `--backend`): one
 * engine process serves a `simulated` and a `local` ProviderConfig side by side, each Cluster is built by its
 * config's backend (the local one a real API server an AccessRequest is granted on, the simulated one's
 * AccessRequest refused as that backend's), and a config naming a module gets a condition, not a load.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, type CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTER_PHASES, REQUEST_PHASES, RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";
import {
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  issuedKubeconfig,
} from "../support/access-proofs.ts";
import { createAccessRequest } from "../support/access-requests.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";
import { engineRunArgs, startEngineCli } from "../support/processes.ts";

const PROVIDER = "choice";
const NAMESPACE = "tenants";
const version = kubeAssetVersions(findKubeAssets()).kubernetes.replace(/^v/, "");
const stateDir = mkdtempSync(join(tmpdir(), "backend-choice-"));
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let engine: ReturnType<typeof startEngineCli> | undefined;

const read = async <T>(resource: (typeof RESOURCES)[keyof typeof RESOURCES], name: string) =>
  (await custom.getNamespacedCustomObject({ ...resource, namespace: NAMESPACE, name })) as T;
/** The AccessRequest `name` once it is in `phase`. */
const requestIn = (name: string, phase: string) =>
  eventually(
    async () => {
      const request = await read<AccessRequest>(RESOURCES.AccessRequest, name);
      expect(request.status?.phase).toBe(phase);
      return request;
    },
    { what: `AccessRequest ${name} ${phase}`, timeoutMs: 90_000 },
  );
const readyOf = (config: ProviderConfig) => config.status?.conditions?.find((c) => c.type === "Ready");

beforeAll(async () => {
  ({ controlPlane, custom } = await startApiServerWith(NAMESPACE));
  const configs = [
    // Named by no provider: an engine that can run its backend claims it.
    aProviderConfig({ name: "sim", backend: "simulated", supportedVersions: [{ version }] }),
    aProviderConfig({ name: "real", backend: "local", supportedVersions: [{ version }] }),
    // A module is loaded only when the engine is started with --backend naming it.
    aProviderConfig({ name: "mod", backend: "./evil.mjs", providerRef: { name: PROVIDER } }),
  ];
  for (const body of configs) await custom.createClusterCustomObject({ ...RESOURCES.ProviderConfig, body });
  engine = startEngineCli(
    engineRunArgs(
      { provider: PROVIDER, environment: "test", kubeconfig: controlPlane.kubeconfigPath, stateDir },
      "--verbosity=INFO", // and no --backend: as openMCP runs a provider
    ),
  );
}, 120_000);

afterAll(async () => {
  // The local backend's clusters go with their Clusters; delete them while the engine still runs.
  for (const name of ["on-sim", "on-real"]) {
    await custom
      .deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE, name })
      .catch(() => undefined);
  }
  await eventually(
    async () => {
      const list = (await custom.listNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NAMESPACE,
      })) as {
        items: Cluster[];
      };
      expect(list.items).toEqual([]);
    },
    { what: "the Clusters gone", timeoutMs: 60_000 },
  ).catch(() => undefined);
  engine?.child.kill("SIGTERM");
  await new Promise((resolve) =>
    engine?.child.exitCode === null ? engine.child.once("exit", resolve) : resolve(0),
  );
  await controlPlane?.stop();
  rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe("run with no --backend", () => {
  it("claims and serves each ProviderConfig with the backend it names, and says why a module is not loaded", async () => {
    for (const name of ["sim", "real"]) {
      await eventually(
        async () => {
          const config = (await custom.getClusterCustomObject({
            ...RESOURCES.ProviderConfig,
            name,
          })) as ProviderConfig;
          expect(config.spec.providerRef?.name).toBe(PROVIDER);
          expect(readyOf(config)?.status).toBe("True");
          expect(config.status?.profileName).toBe(`test.${PROVIDER}.${name}`);
        },
        { what: `ProviderConfig ${name} served`, timeoutMs: 60_000 },
      );
    }
    const mod = await eventually(async () => {
      const config = (await custom.getClusterCustomObject({
        ...RESOURCES.ProviderConfig,
        name: "mod",
      })) as ProviderConfig;
      expect(readyOf(config)?.reason).toBe("ConfigurationProblem");
      return config;
    });
    expect(readyOf(mod)?.message).toBe(
      'backend "./evil.mjs" is not one this controller runs ("simulated", "local", "kind", "existing", "gardener", "capi"); no ClusterProfile is made',
    );
  });

  it("builds each Cluster with its config's backend: the local one a real API server, granted on; the simulated one's access refused as its backend's", async () => {
    for (const [name, config] of [
      ["on-sim", "sim"],
      ["on-real", "real"],
    ] as const) {
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NAMESPACE,
        body: aCluster({ name, namespace: NAMESPACE, profile: `test.${PROVIDER}.${config}` }),
      });
      await createAccessRequest(
        custom,
        NAMESPACE,
        name,
        configMapTokenRequest({ name, namespace: NAMESPACE }),
      );
    }
    for (const name of ["on-sim", "on-real"]) {
      await eventually(
        async () =>
          expect((await read<Cluster>(RESOURCES.Cluster, name)).status?.phase).toBe(CLUSTER_PHASES.ready),
        { what: `Cluster ${name} Ready`, timeoutMs: 90_000 },
      );
    }
    const granted = await requestIn("on-real", REQUEST_PHASES.granted);
    const { kubeConfig } = await issuedKubeconfig(
      controlPlane.kubeConfig.makeApiClient(CoreV1Api),
      NAMESPACE,
      granted.status?.secretRef?.name ?? "",
    );
    await expectConfigMapAccessOnly(kubeConfig);

    const refused = await requestIn("on-sim", REQUEST_PHASES.denied);
    expect(JSON.stringify(refused.status?.conditions)).toContain("backend simulated gives no access");
  }, 240_000);
});
