/**
 * docs/add-a-kind.md's example kind, EndpointExport, added to the engine as one entry and run on a real
 * API server, with its own timing and its own on/off switch, configured by its name alone.
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_EXPORT_TIMING,
  ENDPOINT_EXPORT_DEFINITION,
  endpointExportKind,
} from "../../docs/examples/endpoint-export/kind.ts";
import { EXPORT_FINALIZER } from "../../docs/examples/endpoint-export/step.ts";
import type { EndpointExport } from "../../docs/examples/endpoint-export/types.ts";
import { isNotFound } from "../../src/api/error-message.ts";
import type { MachineStep } from "../../src/machines/shared/machine-step.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { installCrds } from "../../src/runtime/api-server/install-crds.ts";
import { Engine, type EngineOptions } from "../../src/runtime/engine.ts";
import { buildingKindsTimed, MACHINE_KINDS, mergeKindSettings } from "../../src/runtime/kinds/registry.ts";
import { allStatechartFiles } from "../../src/statecharts/export.ts";
import { expectCondition } from "../support/conditions.ts";
import { eventually } from "../support/eventually.ts";
import { FAST_TIMING, startWorld, type World } from "../support/world.ts";

const EXPORTS = { group: "examples.engine.openmcp.cloud", version: "v1alpha1", plural: "endpointexports" };

let world: World;
let core: CoreV1Api;
/** The export's own resync, set by its name: a published export's step asks for exactly this. */
const EXPORT_RESYNC_MS = 123_456;
/** The last step of each export, as the engine reports it. */
const exportSteps = new Map<string, MachineStep<unknown, unknown, unknown>>();

const KINDS = [...MACHINE_KINDS, endpointExportKind]; // the one entry

/** Engine options that drive the example kind; `kindSettings` is the only way it is configured. */
const withExport = (kindSettings: EngineOptions["kindSettings"]) => ({
  kubeConfig: world.controlPlane.kubeConfig,
  providerName: world.provider,
  environment: "test",
  backend: new SimulatedBackend({ provisionDelayMs: 300 }),
  kinds: KINDS,
  kindSettings: mergeKindSettings(buildingKindsTimed(FAST_TIMING), kindSettings),
});

beforeAll(async () => {
  world = await startWorld({
    kinds: KINDS,
    backend: new SimulatedBackend({ provisionDelayMs: 300 }),
    engine: false,
  });
  await installCrds(world.controlPlane.kubeConfig, { directory: "docs/examples/endpoint-export" });
  core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  await world.startEngine({
    kindSettings: { EndpointExport: { timing: { pollMs: 100, resyncMs: EXPORT_RESYNC_MS } } },
    onReconciled: (kind, key, step) => {
      if (kind === "EndpointExport") exportSteps.set(key, step);
    },
  });
});

afterAll(async () => {
  await world?.stop();
});

/** The export, or undefined once it is gone. */
const readExport = (name: string) => world.read<EndpointExport>(EXPORTS, name);

const configMapEndpoint = async (name: string): Promise<string | undefined> => {
  try {
    return (await core.readNamespacedConfigMap({ namespace: world.namespace, name })).data?.endpoint;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
};

describe("a kind added as one entry", () => {
  it("waits for its Cluster, publishes the endpoint, and cleans up on deletion", async () => {
    // The export comes first: it must wait, and the Cluster becoming Ready must wake it.
    await world.create(EXPORTS, {
      apiVersion: `${EXPORTS.group}/${EXPORTS.version}`,
      kind: "EndpointExport",
      metadata: { name: "platform-endpoint", namespace: world.namespace },
      spec: { clusterRef: { name: "platform" }, configMapName: "platform-api" },
    });
    const waiting = await eventually(async () => {
      const found = await readExport("platform-endpoint");
      expect(found?.status?.state).toBe("waiting");
      return found as EndpointExport;
    });
    expectCondition(waiting, { type: "Published", status: "False", reason: "ClusterNotReady" });
    expect(waiting.metadata.finalizers ?? []).not.toContain(EXPORT_FINALIZER);

    await world.createCluster("platform");
    const ready = await world.waitFor("platform", (cluster) => cluster?.status?.phase === "Ready");
    const endpoint = ready?.status?.apiServer;
    expect(endpoint).toMatch(/^https:\/\//);

    const published = await eventually(async () => {
      const found = await readExport("platform-endpoint");
      expect(found?.status).toMatchObject({ phase: "Ready", state: "published", endpoint });
      return found as EndpointExport;
    });
    expect(published.metadata.finalizers).toContain(EXPORT_FINALIZER);
    expect(await configMapEndpoint("platform-api")).toBe(endpoint);
    // At rest it looks again after its own resync (set by its name), not the Clusters' (`timing`).
    await eventually(() =>
      expect(exportSteps.get(`${world.namespace}/platform-endpoint`)).toMatchObject({
        state: "published",
        requeueAfterMs: EXPORT_RESYNC_MS,
      }),
    );

    // ConfigMaps are not watched: a deleted one is mended when the export is looked at again — at the
    // next resync, or, as here, when an edit of the export wakes it.
    await core.deleteNamespacedConfigMap({ namespace: world.namespace, name: "platform-api" });
    await world.custom.patchNamespacedCustomObject({
      ...EXPORTS,
      namespace: world.namespace,
      name: "platform-endpoint",
      body: [{ op: "add", path: "/metadata/labels", value: { touched: "yes" } }],
    });
    await eventually(async () => expect(await configMapEndpoint("platform-api")).toBe(endpoint));

    await world.custom.deleteNamespacedCustomObject({
      ...EXPORTS,
      namespace: world.namespace,
      name: "platform-endpoint",
    });
    await eventually(async () => {
      expect(await configMapEndpoint("platform-api")).toBeUndefined();
      expect(await readExport("platform-endpoint")).toBeUndefined();
    });
  });

  it("has its own timing and on/off switch, which the engine knows only by the kind's name", async () => {
    const drives = async (options: EngineOptions) => {
      const other = new Engine(options); // made, never started
      const driven = other.machines.has("EndpointExport");
      await other.stop();
      return driven;
    };
    expect(await drives(withExport(undefined))).toBe(true);
    expect(await drives(withExport({ EndpointExport: { enabled: false } }))).toBe(false);
    // Its own defaults, not borrowed from the Clusters' timing.
    expect(DEFAULT_EXPORT_TIMING).not.toEqual(FAST_TIMING);
  });

  it("touches only its folder and one registry line: nothing in src names it", () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
      );
    const naming = files("src").filter((file) =>
      /EndpointExport|endpoint-export/.test(readFileSync(file, "utf8")),
    );
    expect(naming).toEqual([]);
  });

  it("gets its statechart files from the same definition", async () => {
    const files = await allStatechartFiles([ENDPOINT_EXPORT_DEFINITION]);
    expect(files.map((file) => file.name)).toEqual([
      "endpointExport.json",
      "endpointExport.mmd",
      "endpointExport.svg",
    ]);
    expect(files[1]?.content).toContain("publishing");
  });
});
