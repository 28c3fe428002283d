/** The `kind` backend passes the backend conformance kit, driving a fake `kind` executable (no Docker). */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { checkBackendConformance } from "../../src/providers/conformance.ts";
import { createBackend } from "../../src/providers/kind.ts";
import { installFakeKind } from "../support/fake-kind.ts";
import { processesMentioning } from "../support/processes.ts";

const fake = installFakeKind({ createDelayMs: 100 });
afterAll(() => fake.remove());

/** Clusters the fake still holds, the backend's cluster folders, and create processes still running. */
async function leftovers(stateDirectory: string): Promise<string[]> {
  const clusters = join(stateDirectory, "clusters");
  const folders = existsSync(clusters)
    ? readdirSync(clusters).map((name) => `folder ${join(clusters, name)}`)
    : [];
  const processes = processesMentioning(`${stateDirectory}/`).map((pid) => `process ${pid}`);
  return [...fake.clusters().map((cluster) => `kind cluster ${cluster.name}`), ...folders, ...processes];
}

it("passes the conformance kit", async () => {
  const numRuns = 10;
  const started = performance.now();
  await checkBackendConformance(createBackend, {
    numRuns,
    maxCommands: 8,
    readyTimeoutMs: 15_000,
    context: { options: { kind: fake.path } },
    leftovers,
    liveClusters: () => fake.clusters().length,
  });
  console.log(`kind (fake executable): ${numRuns} runs in ${Math.round(performance.now() - started)} ms`);
  expect(fake.calls().some((args) => args[0] === "create")).toBe(true);
}, 600_000);
