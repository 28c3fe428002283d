/**
 * The engine beside the openMCP operator, on a real API server: started as openMCP starts a
 * ClusterProvider (no scheduler configuration) it touches no ClusterRequest and rewrites no AccessRequest
 * the operator prepared; with a configuration it still leaves a request another scheduler granted as it is.
 */

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { nameHash } from "../../src/machines/cluster-request/cluster-names.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { CACHES } from "../../src/runtime/kinds/caches.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { type RunningEngine, startEngine } from "../../src/runtime/start/engine-from-settings.ts";
import { mcpSchedulerConfig } from "../fixtures/scheduler-config.ts";
import { aClusterRequest, anAccessRequest } from "../support/builders.ts";
import { type ClusterHarness, startClusterHarness } from "../support/cluster-harness.ts";
import { caughtUp, reconciles } from "../support/engine-signals.ts";
import { eventually } from "../support/eventually.ts";

// Names on the wire, written out: the operator's field manager and finalizers, and the engine's.
const OPERATOR = "openmcp-operator";
const ENGINE = "openmcp-engine";
const REQUEST_FINALIZER = "clusters.openmcp.cloud/request";
const TEAM = "team-a";

let harness: ClusterHarness;
let folder: string;

beforeAll(async () => {
  harness = await startClusterHarness("beside");
  await harness.controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: TEAM } } });
  folder = mkdtempSync(join(tmpdir(), "beside-openmcp-"));
});

afterAll(async () => {
  await harness?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

interface Started {
  readonly running: RunningEngine;
  readonly lines: Array<Record<string, unknown>>;
}

/** The engine as `run` starts it (`--provider-name`, `--environment`, `--verbosity debug`), plus `extra`. */
async function startLikeRun(extra: Parameters<typeof startEngine>[0]["schedulerConfig"]): Promise<Started> {
  const lines: Array<Record<string, unknown>> = [];
  const running = await startEngine({
    providerName: harness.provider,
    environment: "test",
    kubeconfig: harness.controlPlane.kubeConfig,
    backend: () => new SimulatedBackend({ provisionDelayMs: 0 }),
    stateDirectory: join(folder, "state"),
    healthAddress: "127.0.0.1:0",
    log: createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) }),
    ...(extra ? { schedulerConfig: extra } : {}),
  });
  return { running, lines };
}

async function readRequest(name: string, namespace = TEAM): Promise<ClusterRequest> {
  return (await harness.custom.getNamespacedCustomObject({
    ...RESOURCES.ClusterRequest,
    namespace,
    name,
  })) as ClusterRequest;
}

/** Plays the operator's ControlPlane controller: the request, created as its field manager. */
async function requestAsOperator(name: string, purpose: string, namespace = TEAM): Promise<ClusterRequest> {
  return (await harness.custom.createNamespacedCustomObject({
    ...RESOURCES.ClusterRequest,
    namespace,
    body: aClusterRequest({ name, namespace, purpose }),
    fieldManager: OPERATOR,
  })) as ClusterRequest;
}

/** Plays the operator's scheduler: its finalizer on the request, then status.cluster and Granted, as its field manager. */
async function grantAsOperator(
  name: string,
  purpose: string,
  namespace = TEAM,
  cluster = { name: `${purpose}-${nameHash(namespace, name)}`, namespace: harness.namespace },
): Promise<ClusterRequest> {
  const created =
    (await readRequest(name, namespace).catch(() => undefined)) ??
    (await requestAsOperator(name, purpose, namespace));
  await harness.custom.patchNamespacedCustomObject({
    ...RESOURCES.ClusterRequest,
    namespace,
    name,
    body: [{ op: "add", path: "/metadata/finalizers", value: [REQUEST_FINALIZER] }],
    fieldManager: OPERATOR,
  });
  await harness.custom.patchNamespacedCustomObjectStatus({
    ...RESOURCES.ClusterRequest,
    namespace,
    name,
    body: [
      {
        op: "add",
        path: "/status",
        value: { observedGeneration: created.metadata.generation, phase: "Granted", cluster },
      },
    ],
    fieldManager: OPERATOR,
  });
  return readRequest(name, namespace);
}

/** Field managers that own anything of the object (the API server's managedFields). */
function managers(object: { readonly metadata: object }): string[] {
  const { managedFields = [] } = object.metadata as { managedFields?: Array<{ manager?: string }> };
  return [...new Set(managedFields.map((entry) => entry.manager ?? ""))].sort();
}

/** The debug record the engine writes when it looked at a ClusterRequest and left it alone. */
const leftAlone = (lines: readonly Record<string, unknown>[], key: string, why: string) =>
  lines.some((line) => line.msg === "ClusterRequest left alone" && line.request === key && line.why === why);

describe("the engine as openMCP deploys it (run without a scheduler configuration)", () => {
  it("says once that it leaves ClusterRequests to another scheduler, on /readyz too, and touches none", async () => {
    const { running, lines } = await startLikeRun(undefined);
    try {
      const said = lines.filter((line) => String(line.msg).startsWith("scheduler: no configuration"));
      expect(said).toHaveLength(1);
      const port = lines.find((line) => line.msg === "serving probes")?.healthPort as number;
      const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(readyz.status).toBe(200);
      expect(await readyz.text()).toMatch(
        /^ok\nscheduler: no configuration .*ClusterRequests are left to another scheduler/,
      );

      const granted = await grantAsOperator("managedcontrolplane--onboarding", "mcp");
      const pending = (await harness.custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: TEAM,
        body: aClusterRequest({ name: "not-granted-yet", namespace: TEAM, purpose: "mcp" }),
      })) as ClusterRequest;

      // The positive signal: the engine holds both as they are now, has looked at each, and is idle.
      const cache = running.engine.machines.get("ClusterRequest")?.cache;
      if (!cache) throw new Error("the engine drives ClusterRequests");
      await caughtUp(running.engine, cache, async () => [
        await readRequest(granted.metadata.name ?? ""),
        await readRequest(pending.metadata.name ?? ""),
      ]);
      await eventually(() => {
        expect(leftAlone(lines, `${TEAM}/managedcontrolplane--onboarding`, "unconfigured")).toBe(true);
        expect(leftAlone(lines, `${TEAM}/not-granted-yet`, "unconfigured")).toBe(true);
      });

      const after = await readRequest("managedcontrolplane--onboarding");
      expect(after.status).toEqual(granted.status);
      expect(after.metadata.resourceVersion).toBe(granted.metadata.resourceVersion);
      expect(managers(after)).not.toContain(ENGINE);
      const untouched = await readRequest("not-granted-yet");
      expect(untouched.metadata.resourceVersion).toBe(pending.metadata.resourceVersion);
      expect(untouched.status).toBeUndefined();
      expect(untouched.metadata.finalizers ?? []).toEqual([]);
    } finally {
      await running.stop();
    }
  }, 60_000);

  it("leaves an AccessRequest the operator prepared as the operator wrote it", async () => {
    // Prepared by the operator before the engine looks (the generic preparation of both would race for a new one).
    const cluster = await harness.createCluster("prepared-target");
    const name = "prepared-by-operator";
    await harness.custom.createNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: harness.namespace,
      body: anAccessRequest({
        name,
        namespace: harness.namespace,
        clusterRef: { name: cluster.metadata.name ?? "", namespace: harness.namespace },
        token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }] },
      }),
      fieldManager: OPERATOR,
    });
    // The operator's preparation: labels naming another provider and profile than the engine would
    // find (never overwritten), and Pending, each as its own field manager.
    await harness.custom.patchNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: harness.namespace,
      name,
      body: [
        {
          op: "add",
          path: "/metadata/labels",
          value: {
            "clusters.openmcp.cloud/provider": "another-provider",
            "clusters.openmcp.cloud/profile": "elsewhere.another-provider.config",
          },
        },
      ],
      fieldManager: OPERATOR,
    });
    await harness.custom.patchNamespacedCustomObjectStatus({
      ...RESOURCES.AccessRequest,
      namespace: harness.namespace,
      name,
      body: [{ op: "add", path: "/status", value: { observedGeneration: 1, phase: "Pending" } }],
      fieldManager: OPERATOR,
    });
    const read = async () =>
      (await harness.custom.getNamespacedCustomObject({
        ...RESOURCES.AccessRequest,
        namespace: harness.namespace,
        name,
      })) as AccessRequest;
    const prepared = await read();
    const { running } = await startLikeRun(undefined);
    try {
      await caughtUp(running.engine, running.engine.informers.of(CACHES.accessRequests), async () => [
        await read(),
      ]);
      // Preparation has looked at it (the only AccessRequest this engine knows).
      expect(await reconciles(running.metrics, "accessrequest-preparation")).toBeGreaterThan(0);

      const after = await read();
      expect(after.metadata.resourceVersion).toBe(prepared.metadata.resourceVersion);
      expect(after.metadata.labels).toEqual(prepared.metadata.labels);
      expect(managers(after)).toEqual([OPERATOR]);
    } finally {
      await running.stop();
    }
  }, 60_000);
});

describe("the engine with a scheduler configuration", () => {
  it("never overwrites a request another scheduler granted, while it grants others", async () => {
    const path = join(folder, "scheduler.yaml");
    writeFileSync(path, mcpSchedulerConfig(harness.profile, harness.namespace));
    // Granted by the operator's scheduler before this engine's scheduler came (two live schedulers with
    // a configuration each would race for every new request).
    const granted = await grantAsOperator("granted-elsewhere", "mcp");
    const { running, lines } = await startLikeRun({ file: path });
    try {
      await harness.custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: TEAM,
        body: aClusterRequest({ name: "ours", namespace: TEAM, purpose: "mcp" }),
      });
      await eventually(async () => expect((await readRequest("ours")).status?.phase).toBe("Granted"), {
        what: "the engine to grant team-a/ours",
      });
      const ours = await readRequest("ours");
      expect(ours.metadata.annotations?.["engine.openmcp.cloud/scheduler"]).toBe(ENGINE);
      expect(ours.status?.cluster?.name).toBe(`mcp-${nameHash(TEAM, "ours")}`);

      const cache = running.engine.machines.get("ClusterRequest")?.cache;
      if (!cache) throw new Error("the engine drives ClusterRequests");
      await caughtUp(running.engine, cache, async () => [await readRequest("granted-elsewhere")]);
      await eventually(() =>
        expect(leftAlone(lines, `${TEAM}/granted-elsewhere`, "grantedElsewhere")).toBe(true),
      );
      const after = await readRequest("granted-elsewhere");
      expect(after.metadata.resourceVersion).toBe(granted.metadata.resourceVersion);
      expect(after.status).toEqual(granted.status);
      expect(managers(after)).not.toContain(ENGINE);
      // No Cluster was made for it: the operator's scheduler owns that.
      expect(await harness.readCluster(`mcp-${nameHash(TEAM, "granted-elsewhere")}`)).toBeUndefined();
    } finally {
      await running.stop();
    }
  }, 60_000);
});

describe("the engine in openMCP's kcp mode (the operator grants onboarding and mcp itself)", () => {
  it("serves workload requests from hashed per-tenant namespaces and never writes an onboarding or mcp request", async () => {
    // A tenant's namespace on the platform: a hash of `<logical cluster>_<namespace>`, 63 characters.
    const tenant = createHash("sha256").update("root:org:team-b_default").digest("hex").slice(0, 63);
    await harness.controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: tenant } } });
    const path = join(folder, "kcp-scheduler.yaml");
    writeFileSync(
      path,
      `scheduler:
  scope: Namespaced
  purposesServedElsewhere: [onboarding, mcp]
  purposeMappings:
    workload:
      template:
        spec: {profile: ${harness.profile}, tenancy: Exclusive}
`,
    );
    const { running, lines } = await startLikeRun({ file: path });
    try {
      // The ControlPlane controller's requests, not granted yet when the engine first looks.
      const onboarding = await requestAsOperator("cp--onboarding", "onboarding", tenant);
      const mcp = await requestAsOperator("cp--mcp", "mcp", tenant);
      await harness.custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: tenant,
        body: aClusterRequest({ name: "service-workload", namespace: tenant, purpose: "workload" }),
      });

      await eventually(
        async () => expect((await readRequest("service-workload", tenant)).status?.phase).toBe("Granted"),
        { what: `the engine to grant ${tenant}/service-workload` },
      );
      const workload = await readRequest("service-workload", tenant);
      const clusterName = `workload-${nameHash(tenant, "service-workload")}`;
      expect(workload.status?.cluster).toEqual({ name: clusterName, namespace: tenant });
      expect(
        (await harness.custom.getNamespacedCustomObject({
          ...RESOURCES.Cluster,
          namespace: tenant,
          name: clusterName,
        })) as { spec: { profile: string } },
      ).toMatchObject({ spec: { profile: harness.profile } });

      const cache = running.engine.machines.get("ClusterRequest")?.cache;
      if (!cache) throw new Error("the engine drives ClusterRequests");
      await caughtUp(running.engine, cache, async () => [
        await readRequest("cp--onboarding", tenant),
        await readRequest("cp--mcp", tenant),
      ]);
      await eventually(() => {
        expect(leftAlone(lines, `${tenant}/cp--onboarding`, "servedElsewhere")).toBe(true);
        expect(leftAlone(lines, `${tenant}/cp--mcp`, "servedElsewhere")).toBe(true);
      });
      // Not even a ConfigurationProblem or a finalizer while the operator has not answered yet.
      for (const before of [onboarding, mcp]) {
        const now = await readRequest(before.metadata.name ?? "", tenant);
        expect(now.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
        expect(now.status).toBeUndefined();
      }

      // The operator's workspace runtime grants both, with its finalizer; then deletes one.
      const workspace = { name: "workspace", namespace: tenant };
      const granted = await grantAsOperator("cp--mcp", "mcp", tenant, workspace);
      await grantAsOperator("cp--onboarding", "onboarding", tenant, workspace);
      await harness.custom.deleteNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: tenant,
        name: "cp--onboarding",
      });
      await caughtUp(running.engine, cache, async () => [
        await readRequest("cp--mcp", tenant),
        await readRequest("cp--onboarding", tenant),
      ]);
      const after = await readRequest("cp--mcp", tenant);
      expect(after.metadata.resourceVersion).toBe(granted.metadata.resourceVersion);
      expect(managers(after)).not.toContain(ENGINE);
      // Its deletion is the operator's to finish: the shared finalizer stays until the operator removes it.
      const deleting = await readRequest("cp--onboarding", tenant);
      expect(deleting.metadata.finalizers).toEqual([REQUEST_FINALIZER]);
      expect(managers(deleting)).not.toContain(ENGINE);
      expect(await harness.readCluster("workspace")).toBeUndefined();
    } finally {
      await running.stop();
    }
  }, 90_000);
});
