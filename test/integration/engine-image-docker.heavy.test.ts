/**
 * The engine's image with the host's Docker socket mounted, started as openMCP's operator starts a
 * ClusterProvider: no securityContext, no --backend, only --provider-name, --environment, --verbosity. The image
 * carries the kind and docker clients; its entrypoint drops root to uid 1000, keeping only the socket's group,
 * so the kind backend a ProviderConfig names reads the node images the Docker engine holds. Started as uid 1000
 * without that group (a securityContext that forgets it), the ProviderConfig says why it offers nothing.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { localNodeImageVersions } from "../../src/providers/kind/cluster-config.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { aProviderConfig } from "../support/builders.ts";
import { containerToolchain, docker } from "../support/containers.ts";
import { eventually } from "../support/eventually.ts";

const tools = containerToolchain();
const SOCKET = "/var/run/docker.sock";
const folder = mkdtempSync(join(tmpdir(), "engine-image-docker-"));
const suffix = Math.random().toString(36).slice(2, 8);
const containers: string[] = [];
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;

/** Runs the engine image as a detached container on the host's network (the test's API server is on its loopback). */
async function startEngineContainer(
  name: string,
  provider: string,
  extra: readonly string[] = [],
): Promise<string> {
  const container = `omc-image-${name}-${suffix}`;
  containers.push(container);
  await docker(
    ...["run", "-d", "--name", container, "--network", "host", ...extra],
    ...["-v", `${SOCKET}:${SOCKET}`, "-v", `${join(folder, "kubeconfig")}:/kube/config:ro`],
    tools.engineImage,
    ...[
      "run",
      `--provider-name=${provider}`,
      "--environment=test",
      "--verbosity=INFO",
      "--kubeconfig=/kube/config",
      // On the host's network: no probe or metrics port, which two engines would both want.
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
    ],
  );
  return container;
}

const readyOf = async (name: string) => {
  const config = (await custom.getClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    name,
  })) as ProviderConfig;
  return config.status?.conditions?.find((condition) => condition.type === "Ready");
};

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  // Readable by the container's uid 1000 (the original is the test process's own).
  copyFileSync(controlPlane.kubeconfigPath, join(folder, "kubeconfig"));
  chmodSync(join(folder, "kubeconfig"), 0o644);
  chmodSync(folder, 0o755);
  for (const [name, provider] of [
    ["pod-kind", "pod"],
    ["nogroup-kind", "nogroup"],
  ] as const) {
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name, backend: "kind", providerRef: { name: provider } }),
    });
  }
}, 180_000);

afterAll(async () => {
  for (const container of containers) await docker("rm", "-f", "-v", container).catch(() => undefined);
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe("the engine image with the host's Docker socket", () => {
  it("deployed as openMCP deploys it, runs as uid 1000 in the socket's group and offers the node images Docker holds", async () => {
    const container = await startEngineContainer("openmcp", "pod");
    const held = localNodeImageVersions(
      await docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}", "kindest/node"),
    );
    expect(held.map((v) => v.version)).toContain(tools.kubernetesVersion);
    await eventually(async () => expect((await readyOf("pod-kind"))?.status).toBe("True"), {
      what: "ProviderConfig pod-kind served by the kind backend in the container",
      timeoutMs: 90_000,
    });
    const profile = (await custom.getClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      name: "test.pod.pod-kind",
    })) as ClusterProfile;
    expect(profile.spec.supportedVersions).toEqual(held);
    // The engine (PID 1 after the entrypoint's exec) is uid 1000, with the socket's group and no capability.
    const status = await docker("exec", container, "cat", "/proc/1/status");
    const field = (name: string) => status.match(new RegExp(`^${name}:\\s*(.*)$`, "m"))?.[1]?.trim() ?? "";
    expect(field("Uid").split(/\s+/)).toEqual(["1000", "1000", "1000", "1000"]);
    expect(field("Groups").split(/\s+/).sort()).toEqual(["1000", String(statSync(SOCKET).gid)].sort());
    expect(field("CapEff")).toBe("0000000000000000");
    expect(await docker("exec", container, "cat", "/proc/1/cmdline")).toContain("/app/dist/cli/main.js");
  }, 150_000);

  it("started as uid 1000 without the socket's group, says on the ProviderConfig why it offers nothing", async () => {
    const container = await startEngineContainer("nogroup", "nogroup", ["--user", "1000:1000"]);
    const ready = await eventually(
      async () => {
        const condition = await readyOf("nogroup-kind");
        if (condition?.reason === "ConfigurationProblem") return condition;
        const logs = (await docker("logs", "--tail", "8", container).catch(String)).slice(-2_000);
        throw new Error(`Ready is ${JSON.stringify(condition)}; the engine's last lines:\n${logs}`);
      },
      { what: "ProviderConfig nogroup-kind refused with the reason", timeoutMs: 90_000 },
    );
    expect(ready?.message).toContain("kind backend: cannot list the kindest/node images");
    expect(ready?.message).toContain("permission denied");
    expect(ready?.message).toContain("make the Docker socket usable by the engine");
  }, 150_000);
});
