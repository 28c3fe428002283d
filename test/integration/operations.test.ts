/** Running like an in-cluster controller: init twice, leader failover after kill -9, metrics and health probes. */
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { eventually } from "../support/eventually.ts";
import { ENGINE_MAIN, engineRunArgs, startEngineCli } from "../support/processes.ts";

const main = ENGINE_MAIN;
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const children: ChildProcess[] = [];
/** Every `--state-dir` of this file: a temporary folder, never the repository's `.state/`. */
const stateRoot = mkdtempSync(join(tmpdir(), "operations-"));

beforeAll(async () => {
  controlPlane = await startControlPlane(); // no CRDs: `init` installs them
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
});

// A test that fails midway leaves its replicas running: ended here, so that its leader does not keep the Lease
// from the next test's replicas.
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

afterAll(async () => {
  await controlPlane?.stop();
  rmSync(stateRoot, { recursive: true, force: true });
});

/** Starts `run` as the openMCP operator would (flags after the subcommand), with fast leader election. */
function startReplica(name: string, stateDir: string) {
  const { child, output } = startEngineCli(
    engineRunArgs(
      {
        provider: "ops",
        environment: "ops",
        kubeconfig: controlPlane.kubeconfigPath,
        stateDir,
        bind: "127.0.0.1:0",
      },
      "--verbosity=DEBUG",
      "--backend-option=delay=3s",
      "--lease-duration=6s",
      "--renew-deadline=4s",
      "--retry-period=1s",
    ),
    { POD_NAME: name, POD_NAMESPACE: "kube-system" },
  );
  children.push(child);
  const record = (message: string) =>
    output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === message);
  return { child, output, record };
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
          // init loads the backend, which makes <state-dir>/<backend>; the default is ./.state/engine.
          `--state-dir=${join(stateRoot, "init")}`,
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
    expect(crds.items).toHaveLength(20);

    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "sim", backend: "simulated" }),
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
  }, 180_000); // two `init` processes, each starting Node and waiting for sixteen CRDs: minutes on a loaded machine

  it("fails over to the standby within the lease after kill -9, with exactly one backend create per Cluster", async () => {
    const stateDir = mkdtempSync(join(stateRoot, "failover-"));
    await controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: "ha" } } });
    const a = startReplica("replica-a", stateDir);
    await eventually(() => expect(a.record("became leader")).toBeDefined(), { what: "replica-a to lead" });
    const b = startReplica("replica-b", stateDir);
    await eventually(() => expect(b.record("serving probes")).toBeDefined(), {
      what: "replica-b to serve probes",
    });

    const names = ["ha-1", "ha-2", "ha-3"];
    for (const name of names) {
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "ha",
        body: aCluster({ name, namespace: "ha", profile: "ops.ops.sim" }),
      });
    }
    const read = (name: string) =>
      custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: "ha", name }) as Promise<Cluster>;
    await eventually(async () => (await read("ha-1")).status?.providerStatus?.state === "provisioning", {
      what: "ha-1 provisioning",
    });
    expect(b.record("became leader")).toBeUndefined(); // the standby reconciled nothing so far

    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await eventually(() => expect(b.record("became leader")).toBeDefined(), {
      what: "replica-b to lead",
      timeoutMs: 15_000,
    });
    expect(Date.now() - killedAt).toBeLessThan(6_000 + 3_000); // lease duration plus a retry or two

    for (const name of names)
      await eventually(async () => (await read(name)).status?.phase === "Ready", { what: `${name} Ready` });
    const created = new SimulatedBackend({ stateDirectory: join(stateDir, "simulated") }).createdTotal;
    expect(created).toBe(names.length);

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
    // The process itself, and what its caches hold.
    expect(metrics).toMatch(/process_resident_memory_bytes [1-9]/);
    expect(metrics).toMatch(/nodejs_heap_size_used_bytes [1-9]/);
    expect(metrics).toMatch(/nodejs_eventloop_lag_seconds \d/);
    expect(metrics).toMatch(/openmcp_engine_informer_cache_objects\{cache="Cluster"\} 3/);

    b.child.kill("SIGTERM");
    await eventually(() => b.child.exitCode !== null, { what: "replica-b to exit" });
    expect(b.child.exitCode, b.output().slice(-3_000)).toBe(0);
    expect(b.output()).toContain('"msg":"leadership released"');
    expect(a.output() + b.output()).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY)|client-key-data/);
  }, 90_000);

  it("hands a released Lease to the warm standby, not to a replica started to replace the leader", async () => {
    const stateDir = mkdtempSync(join(stateRoot, "handover-"));
    const a = startReplica("replica-a", stateDir);
    await eventually(() => expect(a.record("became leader")).toBeDefined(), { what: "replica-a to lead" });
    const b = startReplica("replica-b", stateDir);
    await eventually(() => expect(b.record("lease held")).toBeDefined(), {
      what: "replica-b to watch the Lease",
    });
    // As when the leader's Pod is deleted: it releases the Lease, and a new Pod starts at once.
    a.child.kill("SIGTERM");
    await eventually(() => expect(a.output()).toContain('"msg":"leadership released"'), {
      what: "the release",
    });
    const c = startReplica("replica-c", stateDir);
    await eventually(() => expect(b.record("became leader")).toBeDefined(), { what: "replica-b to lead" });
    // c has looked at the Lease since (its first look found it released or already b's, then b's).
    await eventually(() => expect(c.output()).toMatch(/"msg":"lease held".*"holder":"replica-b_/), {
      what: "replica-c to see replica-b hold the Lease",
    });
    expect(c.record("became leader")).toBeUndefined();
    for (const replica of [b, c]) replica.child.kill("SIGTERM");
    await eventually(() => b.child.exitCode !== null && c.child.exitCode !== null, {
      what: "b and c to exit",
    });
  }, 90_000);
});
