/** The `kind` backend passes the backend conformance kit against a real Docker engine and real kind clusters. */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { BackendFactory } from "../../src/api/backend-contract.ts";
import { checkBackendConformance, conformanceContext } from "../../src/providers/conformance.ts";
import { createBackend } from "../../src/providers/kind/index.ts";
import { kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { containersNamed, containerToolchain, docker, run } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { processesMentioning } from "../support/processes.ts";

const tools = containerToolchain();

/** The kind cluster names of every Cluster object the kit made (random per kit call), as the backend names them. */
const kitNames = new Set<string>();

/** kind clusters named after the kit's Clusters (the backend names a cluster by its Cluster's name and uid). */
const kitClusterNames = async (): Promise<string[]> => {
  const listed = (await run(tools.kind, ["get", "clusters"])).split("\n").filter((name) => name !== "");
  const kit = kitNames;
  return listed.filter((name) => kit.has(name));
};

/** kind clusters the kit made and their node containers, the backend's folders, and create processes still running. */
async function leftovers(stateDirectory: string): Promise<string[]> {
  const clusters = join(stateDirectory, "clusters");
  const folders = existsSync(clusters)
    ? readdirSync(clusters).map((name) => `folder ${join(clusters, name)}`)
    : [];
  const processes = processesMentioning(`${stateDirectory}/`).map((pid) => `process ${pid}`);
  const kind = await kitClusterNames();
  const containers = (await Promise.all(kind.map((name) => containersNamed(name)))).flat();
  return [
    ...kind.map((name) => `kind cluster ${name}`),
    ...containers.map((c) => `container ${c}`),
    ...folders,
    ...processes,
  ];
}

it("passes the conformance kit on real kind clusters", async () => {
  // The kit's three example lives (plain, moved, slept: each a real kind cluster made, used and removed); the random
  // sequences run on the simulated, local and namespaced backends, where a cluster takes seconds, not a minute.
  const numRuns = 3;
  const started = performance.now();
  /** Kit clusters the real backend reported ready: proof the sequences reached real kind clusters. */
  const ready = new Set<string>();
  const observing: BackendFactory = async (context) => {
    const backend = await createBackend(context);
    const observe = backend.observe.bind(backend);
    const create = backend.create.bind(backend);
    backend.create = async (target, version) => {
      kitNames.add(kindClusterNameOf(target.name, target.uid));
      return create(target, version);
    };
    backend.observe = async (target) => {
      kitNames.add(kindClusterNameOf(target.name, target.uid));
      const observation = await observe(target);
      if (observation.exists && observation.phase === "ready") ready.add(target.uid);
      return observation;
    };
    return backend;
  };
  await checkBackendConformance(observing, {
    numRuns,
    maxCommands: 6,
    readyTimeoutMs: 300_000,
    context: { options: { kind: tools.kind, docker: tools.docker } },
    leftovers,
    liveClusters: async () => (await kitClusterNames()).length,
  });
  console.log(`kind (real Docker): ${numRuns} runs in ${Math.round(performance.now() - started)} ms`);
  console.log(`kind clusters that became ready: ${ready.size}`);
  expect(ready.size).toBeGreaterThan(0); // the kit reached real kind clusters, not just a failing CLI
}, 3_600_000);

/**
 * Hibernation (contract 1.6) on a real kind cluster, with `docker ps` as the witness: hibernate stops its node
 * containers (the same ones wake starts again), a new backend instance still reports it hibernated, and after the
 * wake the endpoint is the same and a kubeconfig obtained before the sleep lists namespaces.
 */
it("hibernates a kind cluster by stopping its node containers and wakes the same ones at the same endpoint", async () => {
  const state = mkdtempSync(join(tmpdir(), "kind-hibernate-"));
  const context = conformanceContext(state, { options: { kind: tools.kind, docker: tools.docker } });
  const target: ClusterTarget = {
    uid: `${randomUUID().slice(0, 8)}-0000-4000-8000-00000000c001`,
    namespace: "kind-hibernate",
    name: "sleeper",
    tenancy: "Exclusive",
    profile: "kind",
    providerConfig: "kind",
  };
  const name = kindClusterNameOf(target.name, target.uid);
  kitNames.add(name);
  const containerStates = async () =>
    (
      await docker(
        "ps",
        "--all",
        "--filter",
        `label=io.x-k8s.kind.cluster=${name}`,
        "--format",
        "{{.Names}} {{.State}}",
      )
    )
      .split("\n")
      .filter(Boolean);
  let backend = await createBackend(context);
  const until = (what: string, wanted: (o: ClusterObservation) => boolean) =>
    eventually(async () => satisfying(await backend.observe(target), wanted), {
      what: `${name}: ${what}`,
      timeoutMs: 300_000,
      intervalMs: 1_000,
    }) as Promise<ClusterObservation>;
  try {
    await backend.create(target, tools.kubernetesVersion);
    const ready = await until("ready", (o) => o.exists && o.phase === "ready");
    const endpoint = ready.exists ? ready.endpoint : undefined;
    const node = `${name}-control-plane`;
    // kind picks the API server's host port at create time and publishes it fixed: Docker keeps it across a stop.
    const bindings = await docker("inspect", "--format", "{{json .HostConfig.PortBindings}}", node);
    console.log(`kind ${node}: endpoint ${endpoint}, port bindings ${bindings.trim()}`);
    expect(bindings).toMatch(new RegExp(`"HostPort":"${new URL(endpoint ?? "https://x:1").port}"`));
    const before = await containerStates();
    expect(before).toEqual([`${node} running`]);
    const kubeconfigBefore = (await backend.adminAccess(target))?.kubeconfig ?? "";
    expect(kubeconfigBefore).toContain(`server: ${endpoint}`);

    let started = performance.now();
    await backend.hibernate?.(target);
    await backend.hibernate?.(target); // idempotent
    await until("hibernated", (o) => o.exists && o.phase === "hibernated");
    const asleep = await containerStates();
    console.log(
      `kind hibernate: ${Math.round(performance.now() - started)} ms; containers ${before} → ${asleep}`,
    );
    expect(asleep).toEqual([`${node} exited`]);
    expect(
      (
        await docker("ps", "--filter", `label=io.x-k8s.kind.cluster=${name}`, "--format", "{{.Names}}")
      ).trim(),
    ).toBe("");
    expect(await backend.adminAccess(target)).toBeUndefined();

    await backend.close?.(); // an engine restart: the new instance reads the wish from the folder
    backend = await createBackend(context);
    await backend.create(target, tools.kubernetesVersion); // changes nothing
    expect(await backend.observe(target)).toMatchObject({ phase: "hibernated" });

    started = performance.now();
    await backend.wake?.(target);
    await backend.wake?.(target); // idempotent
    const woken = await until("ready again", (o) => o.exists && o.phase === "ready");
    console.log(
      `kind wake: ready after ${Math.round(performance.now() - started)} ms; ${await containerStates()}`,
    );
    expect(woken).toMatchObject({ phase: "ready", endpoint });
    expect(await containerStates()).toEqual([`${node} running`]); // the same container, started again
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfigBefore);
    const namespaces = await eventually(
      async () =>
        (await kubeConfig.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name),
      { what: "namespaces with the kubeconfig from before the sleep", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    expect(namespaces).toContain("kube-system");

    await backend.hibernate?.(target);
    await until("hibernated again", (o) => o.exists && o.phase === "hibernated");
    await backend.delete(target); // from hibernated
    await until("gone", (o) => !o.exists);
    expect(await containerStates()).toEqual([]);
  } finally {
    await backend.delete(target).catch(() => {});
    await backend.close?.();
    rmSync(state, { recursive: true, force: true });
  }
}, 1_200_000);
