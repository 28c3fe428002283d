/** The generic machine controller on a real API server: a failing command shows on the object and is retried. */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import { CLUSTER_FINALIZERS, CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aProviderConfig } from "../support/builders.ts";
import { conditionOf } from "../support/conditions.ts";
import { eventually } from "../support/eventually.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

/**
 * The simulated backend, whose creates fail the way a cloud API refuses while `failing` is set, and
 * which never shows the clusters of the names in `neverThere` (a create that never takes).
 */
class FlakyBackend extends SimulatedBackend {
  failing = true;
  failed = 0;
  readonly neverThere = new Set<string>();
  readonly created: Array<{ target: ClusterTarget; version: string }> = [];
  override async observe(target: ClusterTarget): Promise<ClusterObservation> {
    return this.neverThere.has(target.name) ? { exists: false } : super.observe(target);
  }
  override async create(target: ClusterTarget, version: string): Promise<void> {
    this.created.push({ target, version });
    if (this.failing) {
      this.failed++;
      throw new Error("quota exceeded in region eu-1: 0 of 0 clusters free");
    }
    await super.create(target, version);
  }
}

let world: World;
const backend = new FlakyBackend({ provisionDelayMs: 0 });
const logLines: string[] = [];
const POLL_MS = 100;

beforeAll(async () => {
  world = await startWorld({
    backend,
    timing: { pollMs: POLL_MS, retryMs: 200, resyncMs: 60_000 },
    engine: { log: createLogger({ level: "info", write: (line) => logLines.push(line) }) },
  });
});

afterAll(async () => {
  await world?.stop();
});

describe("a command that fails", () => {
  it("is reported on the object (condition and one Warning Event), retried with backoff, and cleared once it succeeds", async () => {
    await world.createCluster("flaky");
    const failing = await world.waitFor("flaky", (cluster) =>
      (cluster?.status?.conditions ?? []).some((c) => c.reason === "BackendError"),
    );
    expect(failing?.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: "ClusterReady",
        status: "False",
        reason: "BackendError",
        message: "create failed: quota exceeded in region eu-1: 0 of 0 clusters free",
      }),
    );
    // The finalizer was stored before the first backend call, failed or not.
    expect(failing?.metadata.finalizers).toContain(CLUSTER_FINALIZERS.cluster);
    // Retried with backoff: more attempts follow without any change to the object.
    await eventually(() => backend.failed >= 3);

    backend.failing = false;
    const ready = await world.waitFor("flaky", isReady);
    expect(ready?.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "ClusterReady", status: "True", reason: "Ready" }),
    );

    const events = await eventually(async () => {
      const list = await world.controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({
        namespace: world.namespace,
        fieldSelector: `involvedObject.uid=${ready?.metadata.uid}`,
      });
      expect(list.items.map((event) => event.reason)).toContain("Ready");
      return list.items;
    });
    // Told once per distinct failure, not once per retry (there were at least three).
    const warnings = events.filter((event) => event.type === "Warning");
    expect(warnings.map((warning) => [warning.reason, warning.message])).toEqual([
      ["BackendError", "create failed: quota exceeded in region eu-1: 0 of 0 clusters free"],
    ]);
  });
});

describe("the ProviderConfig of a Cluster's profile", () => {
  it("gives its settings to every command and its defaultVersion to an unversioned Cluster", async () => {
    backend.failing = false;
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({
        supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7" }],
        defaultVersion: "1.32.7",
        settings: { region: "eu-1" },
      }),
    });
    // Once the engine has published the config (its Ready condition), its caches hold it. A Cluster reconciled
    // before that is built at the profile's newest version, 1.33.3, and the config's default then resolves to a
    // downgrade, refused as documented: the Cluster never Ready (run 40, 2026-11-30, one run in about forty).
    await eventually(
      async () =>
        conditionOf(
          (await world.custom.getClusterCustomObject({
            ...RESOURCES.ProviderConfig,
            name: "small",
          })) as ProviderConfig,
          "Ready",
        )?.status === "True",
      { what: "ProviderConfig small Ready" },
    );
    await world.createCluster("defaulted");
    const ready = await world.waitFor("defaulted", isReady);
    expect(ready?.metadata.labels?.[CLUSTER_LABELS.k8sVersion]).toBe("1.32.7");
    const create = backend.created.find((call) => call.target.name === "defaulted");
    expect(create).toMatchObject({ version: "1.32.7", target: { settings: { region: "eu-1" } } });
  });
});

describe("commands that never settle an object", () => {
  it("are looked at again after a delay that grows and stays bounded, never in a hot loop", async () => {
    backend.failing = false;
    backend.neverThere.add("restless"); // every create succeeds, and the cluster never shows up
    await world.createCluster("restless");
    const key = `${world.namespace}/restless`;
    const delays = () =>
      logLines
        .map(
          (line) =>
            JSON.parse(line) as { msg: string; key?: string; unfinished?: boolean; requeueAfterMs?: number },
        )
        .filter((entry) => entry.msg === "reconciled" && entry.key === key && entry.unfinished)
        .map((entry) => entry.requeueAfterMs ?? 0);
    await eventually(() => expect(delays().length).toBeGreaterThanOrEqual(4));
    backend.neverThere.delete("restless");
    const [first, second, ...later] = delays();
    // Three rounds a reconcile, then a delay: 50 ms, doubled, never more than the state's own poll.
    expect(first).toBe(50);
    expect(second).toBe(100);
    for (const delay of later) expect(delay).toBe(POLL_MS);
    await world.waitFor("restless", isReady);
  });
});
