/**
 * `openmcp-engine init` as openMCP's operator runs it for a provider nobody configured: with `--provider-name kind`
 * and no ProviderConfig it makes the default ProviderConfig `kind` and its ClusterProfile `kind`, once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { PROVIDER_CONFIG_ANNOTATIONS } from "../../src/api/constants/provider-config.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { init } from "../../src/cli/init.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const stateRoot = mkdtempSync(join(tmpdir(), "cli-init-"));

beforeAll(async () => {
  controlPlane = await startControlPlane();
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await controlPlane?.stop();
  rmSync(stateRoot, { recursive: true, force: true });
});

/**
 * init as the operator runs it for provider kind (plus where the test's API server is and where state goes).
 * `--backend simulated` stands in for the kind backend, which would need Docker and kind here.
 */
const initKind = () =>
  init([
    "--environment=openmcp",
    "--provider-name=kind",
    "--verbosity=ERROR",
    "--backend=simulated",
    `--kubeconfig=${controlPlane.kubeconfigPath}`,
    `--state-dir=${stateRoot}`,
  ]);

const readConfig = () =>
  custom.getClusterCustomObject({ ...RESOURCES.ProviderConfig, name: "kind" }) as Promise<ProviderConfig>;
const readProfile = () =>
  custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: "kind" }) as Promise<ClusterProfile>;

describe("openmcp-engine init without a ProviderConfig", () => {
  it("makes ProviderConfig kind and ClusterProfile kind before it exits, and a second init changes nothing", async () => {
    await initKind();

    const config = await readConfig();
    expect(config.metadata.annotations).toMatchObject({ [PROVIDER_CONFIG_ANNOTATIONS.madeBy]: "init" });
    expect(config.spec).toEqual({ providerRef: { name: "kind" }, profileName: "kind", backend: "simulated" });
    expect(config.status?.profileName).toBe("kind");
    expect(config.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "Ready", status: "True" }),
    );
    const profile = await readProfile();
    expect(profile.spec.providerRef).toEqual({ name: "kind" });
    expect(profile.spec.providerConfigRef).toEqual({ name: "kind" });

    await initKind();
    expect((await readConfig()).metadata.resourceVersion).toBe(config.metadata.resourceVersion);
    expect((await readProfile()).metadata.resourceVersion).toBe(profile.metadata.resourceVersion);
    const configs = (await custom.listClusterCustomObject({ ...RESOURCES.ProviderConfig })) as {
      items: ProviderConfig[];
    };
    expect(configs.items.map((item) => item.metadata.name)).toEqual(["kind"]);
  }, 180_000);

  it("keeps what a person changed in the default config", async () => {
    await custom.patchClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: "kind",
      body: [{ op: "add", path: "/spec/supportedVersions", value: [{ version: "1.33.3" }] }],
    });
    await initKind();
    expect((await readConfig()).spec.supportedVersions).toEqual([{ version: "1.33.3" }]);
    expect((await readProfile()).spec.supportedVersions).toEqual([{ version: "1.33.3" }]);
  }, 180_000);
});
