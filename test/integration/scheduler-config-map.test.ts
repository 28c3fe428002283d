/** The scheduler configuration from a ConfigMap: refused at start when invalid, reloaded on change, kept (with a Warning Event) when an edit is invalid. */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import {
  configMapSource,
  type SchedulerConfigSource,
} from "../../src/runtime/kinds/cluster-request/scheduler-config-source.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import { mcpSchedulerConfig } from "../fixtures/scheduler-config.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";

let controlPlane: ControlPlane;
let core: CoreV1Api;
const sources: SchedulerConfigSource[] = [];

beforeAll(async () => {
  ({ controlPlane } = await startApiServerWith("engine"));
  core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  for (const source of sources) source.stop();
  await controlPlane?.stop();
});

function sourceFor(name: string): SchedulerConfigSource {
  const source = configMapSource({
    kubeConfig: controlPlane.kubeConfig,
    namespace: "engine",
    name,
    log: silentLogger,
  });
  sources.push(source);
  return source;
}

async function writeConfigMap(name: string, text: string): Promise<void> {
  const body = { metadata: { name, namespace: "engine" }, data: { "config.yaml": text } };
  try {
    await core.createNamespacedConfigMap({ namespace: "engine", body });
  } catch {
    await core.replaceNamespacedConfigMap({ namespace: "engine", name, body });
  }
}

describe("the scheduler configuration in a ConfigMap", () => {
  it("refuses to start on a missing ConfigMap or an invalid configuration, naming every problem", async () => {
    await expect(sourceFor("absent").start()).rejects.toThrow("ConfigMap engine/absent does not exist");
    await writeConfigMap("broken", "scheduler:\n  strategy: Fastest\n  purposeMapings: {}\n");
    const error = await sourceFor("broken")
      .start()
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(error?.message).toContain(
      'scheduler.strategy: "Fastest" is not one of Balanced, BalancedIgnoreEmpty, Random, Simple',
    );
    expect(error?.message).toContain("scheduler.purposeMapings: unknown field");

    // A name the API server would refuse for the Clusters, or a prefix leaving no room for the hash.
    await writeConfigMap(
      "bad-names",
      `scheduler:\n  purposeMappings:\n    Big_Purpose:\n      template:\n        spec: {profile: a.b.c, tenancy: Exclusive}\n`,
    );
    await expect(sourceFor("bad-names").start()).rejects.toThrow(
      `scheduler.purposeMappings.Big_Purpose.(the purpose, as the name prefix): the Cluster name prefix "Big_Purpose-" may hold only lowercase letters`,
    );
  });

  it("reloads a valid edit, and keeps the configuration in force with a Warning Event on an invalid one", async () => {
    await writeConfigMap("live", mcpSchedulerConfig("a.b.c"));
    const source = sourceFor("live");
    const seen: string[] = [];
    source.onChange((next) => seen.push(next.purposeMappings.mcp?.template.spec.profile ?? ""));
    await source.start();
    expect(source.current()?.purposeMappings.mcp?.template.spec.profile).toBe("a.b.c");

    await writeConfigMap("live", mcpSchedulerConfig("x.y.z"));
    await eventually(() =>
      expect(source.current()?.purposeMappings.mcp?.template.spec.profile).toBe("x.y.z"),
    );
    expect(seen).toEqual(["x.y.z"]);

    await writeConfigMap("live", "scheduler:\n  scope: Everywhere\n");
    const events = await eventually(async () => {
      const list = await core.listNamespacedEvent({
        namespace: "engine",
        fieldSelector: "involvedObject.name=live",
      });
      const warning = list.items.find((event) => event.reason === "InvalidSchedulerConfig");
      expect(warning?.type).toBe("Warning");
      return list.items;
    });
    expect(events.find((e) => e.reason === "InvalidSchedulerConfig")?.message).toContain(
      'scheduler.scope: "Everywhere" is not one of Cluster, Namespaced',
    );
    expect(source.current()?.purposeMappings.mcp?.template.spec.profile).toBe("x.y.z");
    expect(seen).toEqual(["x.y.z"]);
  });
});
