/** Running like an in-cluster controller: init twice, leader failover after kill -9, metrics and health probes. */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTERS_API_VERSION, ENGINE_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";

const main = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const children: ChildProcess[] = [];

beforeAll(async () => {
  controlPlane = await startControlPlane(); // no CRDs: `init` installs them
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await controlPlane?.stop();
});

/** Starts `run` as the openMCP operator would (flags after the subcommand), with fast leader election. */
function startReplica(name: string, stateDir: string) {
  const child = spawn(
    process.execPath,
    [
      main,
      "run",
      "--environment=ops",
      "--provider-name=ops",
      "--verbosity=DEBUG",
      `--kubeconfig=${controlPlane.kubeconfigPath}`,
      `--state-dir=${stateDir}`,
      "--backend-option=delay=3s",
      "--lease-duration=6s",
      "--renew-deadline=4s",
      "--retry-period=1s",
      "--metrics-bind-address=127.0.0.1:0",
      "--health-probe-bind-address=127.0.0.1:0",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, POD_NAME: name, POD_NAMESPACE: "kube-system" },
    },
  );
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const record = (message: string) =>
    output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === message);
  return { child, output: () => output, record };
}

async function until<T>(
  what: string,
  read: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe("an in-cluster style deployment", () => {
  it("init installs the CRDs with the platform label and the profiles, and is harmless twice", async () => {
    const init = () =>
      spawnSync(
        process.execPath,
        [
          main,
          "init",
          "--environment=ops",
          "--provider-name=ops",
          "--verbosity=info",
          `--kubeconfig=${controlPlane.kubeconfigPath}`,
        ],
        { encoding: "utf8", env: { ...process.env, POD_NAMESPACE: "kube-system" } },
      );
    const first = init();
    expect(first.status, first.stderr).toBe(0);
    const crds = await controlPlane.kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .listCustomResourceDefinition();
    for (const crd of crds.items)
      expect(crd.metadata?.labels).toMatchObject({ "openmcp.cloud/cluster": "platform" });
    expect(crds.items).toHaveLength(5);

    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: {
        apiVersion: ENGINE_API_VERSION,
        kind: "ProviderConfig",
        metadata: { name: "sim" },
        spec: { backend: "simulated" },
      },
    });
    const second = init();
    expect(second.status, second.stderr).toBe(0);
    const profile = (await custom.getClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      name: "ops.ops.sim",
    })) as {
      spec: { providerRef: { name: string } };
    };
    expect(profile.spec.providerRef.name).toBe("ops");
  }, 60_000);

  it("fails over to the standby within the lease after kill -9, with exactly one backend create per Cluster", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "failover-"));
    await controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: "ha" } } });
    const a = startReplica("replica-a", stateDir);
    await until("replica-a to lead", () => a.record("became leader"));
    const b = startReplica("replica-b", stateDir);
    await until("replica-b to serve probes", () => b.record("serving probes"));

    const names = ["ha-1", "ha-2", "ha-3"];
    for (const name of names) {
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "ha",
        body: {
          apiVersion: CLUSTERS_API_VERSION,
          kind: "Cluster",
          metadata: { name },
          spec: { profile: "ops.ops.sim", tenancy: "Shared" },
        },
      });
    }
    const read = (name: string) =>
      custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: "ha", name }) as Promise<Cluster>;
    await until(
      "provisioning",
      async () => (await read("ha-1")).status?.providerStatus?.state === "provisioning",
    );
    expect(b.record("became leader")).toBeUndefined(); // the standby reconciled nothing so far

    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await until("replica-b to lead", () => b.record("became leader"), 15_000);
    expect(Date.now() - killedAt).toBeLessThan(6_000 + 3_000); // lease duration plus a retry or two

    for (const name of names)
      await until(`${name} Ready`, async () => (await read(name)).status?.phase === "Ready");
    const state = JSON.parse(readFileSync(join(stateDir, "simulated", "simulated.json"), "utf8")) as {
      created: number;
    };
    expect(state.created).toBe(names.length);

    // The leader's probes and metrics.
    const metricsPort = b.record("serving probes")?.metricsPort as number;
    const healthPort = b.record("serving probes")?.healthPort as number;
    expect((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const reconciles =
      /controller_runtime_reconcile_total\{controller="cluster",result="(?:success|requeue_after)"\} (\d+)/.exec(
        metrics,
      );
    expect(Number(reconciles?.[1])).toBeGreaterThan(0);
    expect(metrics).toMatch(/workqueue_depth\{name="cluster",controller="cluster"\} \d+/);
    expect(metrics).toMatch(/workqueue_adds_total\{name="cluster",controller="cluster"\} [1-9]/);
    expect(metrics).toMatch(/leader_election_master_status\{name="ops.engine.openmcp.cloud"\} 1/);
    expect(metrics).toMatch(/openmcp_engine_objects\{kind="Cluster",phase="Ready"\} 3/);

    b.child.kill("SIGTERM");
    await until("replica-b to exit", () => (b.child.exitCode === null ? undefined : b.child.exitCode + 1));
    expect(b.child.exitCode, b.output().slice(-3_000)).toBe(0);
    expect(b.output()).toContain('"msg":"leadership released"');
    expect(a.output() + b.output()).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY)|client-key-data/);
  }, 90_000);
});
