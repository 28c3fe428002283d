/** The `local` backend passes the backend conformance kit, on real etcd + kube-apiserver processes. */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import type { BackendFactory } from "../../src/api/backend-contract.ts";
import { createBackend } from "../../src/providers/local.ts";
import { signalProcessGroup } from "../../src/util/process-groups.ts";
import { processesMentioning } from "../support/processes.ts";
import { checkConformanceTimed } from "../support/timed-conformance.ts";

/** Every state folder the kit gave the backend, so that afterAll can stop what a failed run left running. */
const stateDirectories = new Set<string>();
const factory: BackendFactory = (context) => {
  stateDirectories.add(context.stateDirectory);
  return createBackend(context);
};

/** Cluster folders (also those being removed) and processes still running from this state folder. */
async function leftovers(stateDirectory: string): Promise<string[]> {
  const clusters = join(stateDirectory, "clusters");
  const folders = existsSync(clusters)
    ? readdirSync(clusters).map((name) => `folder ${join(clusters, name)}`)
    : [];
  const processes = processesMentioning(`${stateDirectory}/`).map((pid) => `process ${pid}`);
  return [...folders, ...processes];
}

afterAll(() => {
  for (const directory of stateDirectories) {
    for (const pid of processesMentioning(`${directory}/`)) signalProcessGroup(pid, "SIGKILL");
  }
});

it("passes the conformance kit", async () => {
  await checkConformanceTimed("local", factory, {
    numRuns: 4, // the three example lives (plain, moved, slept) count among them: one random sequence besides
    maxCommands: 6,
    readyTimeoutMs: 60_000,
    leftovers,
  });
  expect(stateDirectories.size).toBeGreaterThan(0);
}, 600_000);
