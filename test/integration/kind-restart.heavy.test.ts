/**
 * The engine killed (-9) while `kind create cluster` runs: the create goes on detached, a new engine process on
 * the same state folder adopts it, and the Cluster goes Ready on the one kind cluster that first create made.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { containersNamed, containerToolchain, run } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { deleteKindClusters, kindClustersMadeIn } from "../support/kind-engine-world.ts";
import { readCustomObject } from "../support/maybe-absent.ts";
import { engineRunArgs, isAlive, startEngineCli } from "../support/processes.ts";

const NS = "kind-restart";
const tools = containerToolchain();
const stateDirectory = mkdtempSync(join(tmpdir(), "kind-restart-"));
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const engines: ReturnType<typeof startEngineCli>[] = [];

const startEngine = () => {
  const engine = startEngineCli(
    engineRunArgs(
      {
        provider: "kind-test",
        environment: "test",
        kubeconfig: controlPlane.kubeconfigPath,
        stateDir: stateDirectory,
      },
      "--backend=kind",
      `--backend-option=kind=${tools.kind}`,
      `--backend-option=docker=${tools.docker}`,
      "--no-leader-elect",
    ),
  );
  engines.push(engine);
  return engine;
};

const readCluster = (name: string) => readCustomObject<Cluster>(custom, RESOURCES.Cluster, NS, name);

beforeAll(async () => {
  ({ controlPlane, custom } = await startApiServerWith(NS));
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "kind", backend: "kind", providerRef: { name: "kind-test" } }),
  });
}, 120_000);

afterAll(async () => {
  for (const engine of engines) engine.child.kill("SIGKILL");
  await controlPlane?.stop();
  // Whatever kind cluster a failed run left (the engine's kind backend keeps its state in `kind/`).
  await deleteKindClusters(kindClustersMadeIn(join(stateDirectory, "kind")));
  rmSync(stateDirectory, { recursive: true, force: true });
}, 300_000);

it("adopts a kind create that outlived a killed engine: one create, one kind cluster, the Cluster Ready", async () => {
  const first = startEngine();
  await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NS,
    body: aCluster({ name: "survivor", namespace: NS, profile: "test.kind-test.kind", tenancy: "Exclusive" }),
  });
  const provisioning = await eventually(
    async () =>
      satisfying(await readCluster("survivor"), (c) => c?.status?.providerStatus?.state === "provisioning"),
    { what: "Cluster survivor provisioning", timeoutMs: 120_000, intervalMs: 200 },
  );
  const name = kindClusterNameOf(provisioning?.metadata.name ?? "", provisioning?.metadata.uid ?? "");
  const recordFile = join(stateDirectory, "kind", "clusters", name, "record.json");
  const record = await eventually(
    () => JSON.parse(readFileSync(recordFile, "utf8")) as { pid: number; startedAt: string },
    {
      what: `the kind backend's record of ${name}`,
      timeoutMs: 60_000,
    },
  );
  // Kill the engine while kind is still creating (its node container is there, the cluster not yet Ready).
  await eventually(async () => (await containersNamed(name)).length === 1, {
    what: `the node container of ${name}`,
    timeoutMs: 120_000,
    intervalMs: 200,
  });
  expect(isAlive(record.pid)).toBe(true);
  first.child.kill("SIGKILL");
  await eventually(() => !isAlive(first.child.pid ?? 0), { what: "the first engine gone" });
  expect(isAlive(record.pid)).toBe(true); // the create runs on without the engine

  const second = startEngine();
  const ready = await eventually(
    async () => satisfying(await readCluster("survivor"), (c) => c?.status?.phase === "Ready"),
    {
      what: "Cluster survivor Ready under the second engine",
      timeoutMs: 400_000,
      intervalMs: 1_000,
    },
  );
  expect(ready?.metadata.uid).toBe(provisioning?.metadata.uid);
  // One create: the record is the first engine's, kind holds one cluster of that name, one node container.
  expect(JSON.parse(readFileSync(recordFile, "utf8"))).toMatchObject({
    pid: record.pid,
    startedAt: record.startedAt,
  });
  expect(`${first.output()}\n${second.output()}`.match(/kind create started/g)).toHaveLength(1);
  expect((await run(tools.kind, ["get", "clusters"])).split("\n").filter((c) => c === name)).toHaveLength(1);
  expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);

  await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "survivor" });
  await eventually(async () => (await readCluster("survivor")) === undefined, {
    what: "Cluster survivor gone",
    timeoutMs: 180_000,
    intervalMs: 1_000,
  });
  expect(await containersNamed(name)).toEqual([]);
}, 900_000);
