/** The `kind` backend passes the backend conformance kit against a real Docker engine and real kind clusters. */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { BackendFactory } from "../../src/api/backend-contract.ts";
import { checkBackendConformance } from "../../src/providers/conformance.ts";
import { createBackend } from "../../src/providers/kind/index.ts";
import { kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { containersNamed, containerToolchain, run } from "../support/containers.ts";
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
