/**
 * Benchmark: N ClusterRequests over 3 purposes (Exclusive; Shared, 10 per Cluster; Shared, unlimited)
 * granted by the engine's scheduler on a real API server, against a baseline measured in the same run: a
 * bare client that already knows every answer and makes only the minimal writes (request finalizer,
 * Cluster create or finalizer, grant, status). Writes are counted by the API server itself
 * (apiserver_request_total). Prints figures; asserts nothing.
 *
 * Usage: node bench/cluster-requests.bench.ts [--requests 1000 --concurrency 16]
 */
import { request as httpsRequest, type RequestOptions } from "node:https";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import {
  CLUSTERS_API_VERSION,
  ENGINE_API_VERSION,
  FINALIZERS,
  LABELS,
  RESOURCES,
} from "../src/api/constants.ts";
import type { SchedulerConfig } from "../src/api/scheduler-config.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { requestFinalizer } from "../src/machines/cluster-request/cluster-claims.ts";
import { SimulatedBackend } from "../src/providers/simulated.ts";
import { reuseConnections } from "../src/runtime/connection-reuse.ts";
import { Engine } from "../src/runtime/engine.ts";
import { CACHES } from "../src/runtime/informers.ts";
import { installingCrds } from "../src/runtime/install-crds.ts";
import { clusterRequestKind } from "../src/runtime/kinds/cluster-request.ts";
import type { MachineKind } from "../src/runtime/machine-kind.ts";
import { pool } from "./bench-clusters.ts";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "1000" }, concurrency: { type: "string", default: "16" } },
});
const count = Number(values.requests);
const concurrency = Number(values.concurrency);
const PURPOSES = ["mcp", "workload", "platform"] as const;
const PROFILE = "bench.bench.sim";

/** Mutating requests the API server has served so far (POST, PUT, PATCH, DELETE), from its own metrics. */
async function serverWrites(kubeConfig: KubeConfig, server: string): Promise<number> {
  const url = new URL("/metrics", server);
  const options: RequestOptions = { hostname: url.hostname, port: url.port, path: url.pathname };
  await kubeConfig.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const req = httpsRequest({ ...options, method: "GET" }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    if (!/verb="(POST|PUT|PATCH|DELETE)"/.test(line)) continue;
    if (!/group="(clusters|engine)\.openmcp\.cloud"/.test(line)) continue;
    total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

const requestBody = (name: string, namespace: string, purpose: string, labels: Record<string, string>) => ({
  apiVersion: CLUSTERS_API_VERSION,
  kind: "ClusterRequest",
  metadata: { name, namespace, labels },
  spec: { purpose },
});

const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
// The baseline client reuses its TLS connections as the engine does: a fair bare client.
reuseConnections(controlPlane.kubeConfig);
try {
  const { kubeConfig, server } = controlPlane;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["baseline", "engine", "baseline-clusters", "engine-clusters"])
    await core.createNamespace({ body: { metadata: { name } } });
  console.log(
    `${count} ClusterRequests over ${PURPOSES.join(", ")}, ${concurrency} in flight, Node ${process.version}\n`,
  );

  // Baseline: a client that knows every answer; writes what any scheduler must, nothing else.
  let writesBefore = await serverWrites(kubeConfig, server);
  const baselineStart = performance.now();
  /** Shared Clusters being made: the first request makes one, the others wait for it and then join it. */
  const sharedMade = new Map<string, Promise<unknown>>();
  await pool(count, concurrency, async (i) => {
    const purpose = PURPOSES[i % 3] ?? "mcp";
    const name = `r-${i}`;
    const created = (await custom.createNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "baseline",
      body: requestBody(name, "baseline", purpose, {}),
    })) as { metadata: { uid: string } };
    const uid = created.metadata.uid;
    const target = { ...RESOURCES.ClusterRequest, namespace: "baseline", name };
    await custom.patchNamespacedCustomObject({
      ...target,
      body: [{ op: "add", path: "/metadata/finalizers", value: [FINALIZERS.request] }],
    });
    const cluster =
      purpose === "mcp" ? `mcp-${i}` : purpose === "workload" ? `workload-${Math.floor(i / 30)}` : "platform";
    const making = sharedMade.get(cluster);
    if (purpose === "mcp" || !making) {
      const create = custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "baseline-clusters",
        body: {
          apiVersion: CLUSTERS_API_VERSION,
          kind: "Cluster",
          metadata: {
            name: cluster,
            finalizers: [requestFinalizer(uid)],
            labels: { [LABELS.deleteWithoutRequests]: "true" },
          },
          spec: {
            profile: "bench.baseline.sim",
            tenancy: purpose === "mcp" ? "Exclusive" : "Shared",
            purposes: [purpose],
          },
        },
      });
      if (purpose !== "mcp") sharedMade.set(cluster, create);
      await create;
    } else {
      await making;
      await custom.patchNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "baseline-clusters",
        name: cluster,
        body: [{ op: "add", path: "/metadata/finalizers/-", value: requestFinalizer(uid) }],
      });
    }
    await custom.createNamespacedCustomObject({
      ...RESOURCES.ClusterRequestGrant,
      namespace: "baseline",
      body: {
        apiVersion: ENGINE_API_VERSION,
        kind: "ClusterRequestGrant",
        metadata: { name },
        spec: { requestUID: uid, clusterRef: { name: cluster, namespace: "baseline-clusters" }, prefix: "" },
      },
    });
    await custom.patchNamespacedCustomObjectStatus({
      ...target,
      body: [
        {
          op: "add",
          path: "/status",
          value: {
            observedGeneration: 1,
            phase: "Granted",
            cluster: { name: cluster, namespace: "baseline-clusters" },
          },
        },
      ],
    });
  });
  const baselineMs = performance.now() - baselineStart;
  const baselineWrites = (await serverWrites(kubeConfig, server)) - writesBefore;

  // The engine's scheduler alone (its Cluster controller would add its own writes to the Clusters).
  const config: SchedulerConfig = {
    scope: "Cluster",
    strategy: "Balanced",
    selectors: { requests: { matchLabels: { bench: "engine" } } },
    purposeMappings: {
      mcp: {
        tenancyCount: 0,
        template: {
          metadata: { namespace: "engine-clusters" },
          spec: { profile: PROFILE, tenancy: "Exclusive" },
        },
      },
      workload: {
        tenancyCount: 10,
        template: {
          metadata: { namespace: "engine-clusters" },
          spec: { profile: PROFILE, tenancy: "Shared" },
        },
      },
      platform: {
        tenancyCount: 0,
        template: {
          metadata: { namespace: "engine-clusters", name: "platform" },
          spec: { profile: PROFILE, tenancy: "Shared" },
        },
      },
    },
  };
  const engine = new Engine({
    kubeConfig,
    providerName: "bench",
    environment: "bench",
    backend: new SimulatedBackend({ provisionDelayMs: 0 }),
    concurrency,
    kinds: [clusterRequestKind as MachineKind],
    prepareAccessRequests: false,
    recordEvents: false,
    schedulerConfig: { current: () => config, onChange: () => {} },
  });
  await engine.start();
  const granted = new Set<string>();
  engine.informers.of(CACHES.clusterRequests).on((event) => {
    if (event.object.metadata.namespace === "engine" && event.object.status?.phase === "Granted")
      granted.add(event.key);
  });
  writesBefore = await serverWrites(kubeConfig, server);
  const engineStart = performance.now();
  await pool(count, concurrency, async (i) => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "engine",
      body: requestBody(`r-${i}`, "engine", PURPOSES[i % 3] ?? "mcp", { bench: "engine" }),
    });
  });
  while (granted.size < count) await sleep(10);
  const engineMs = performance.now() - engineStart;
  await sleep(2_000); // let requeues and watch echoes pass before counting
  const engineWrites = (await serverWrites(kubeConfig, server)) - writesBefore;
  await engine.stop();

  const row = (label: string, value: string, target = "") =>
    console.log(`${label.padEnd(48)}${value.padEnd(16)}${target}`);
  row("measure", "value", "target");
  row("baseline: the minimal writes, all requests", `${(baselineMs / 1_000).toFixed(2)} s`);
  row("engine: create → all Granted", `${(engineMs / 1_000).toFixed(2)} s`);
  row("ratio engine / baseline", `${(engineMs / baselineMs).toFixed(2)}×`, "≤ 1.5×");
  row("writes per request, baseline (incl. its create)", (baselineWrites / count).toFixed(2));
  row("writes per request, engine (incl. its create)", (engineWrites / count).toFixed(2));
} finally {
  await controlPlane.stop();
}
