/**
 * Benchmark: N ClusterRequests over 3 purposes (Exclusive; Shared, 10 per Cluster; Shared, unlimited)
 * granted by the engine's scheduler on a real API server, against a baseline measured in the same run: a
 * bare client that already knows every answer and makes only the minimal writes (request finalizer,
 * Cluster create or finalizer, grant, status). Writes are counted by the API server itself
 * (apiserver_request_total). The engine runs as its own `run` process, started each way `--start` names
 * (see STARTS), each on an API server of its own, and its peak RSS is read from /proc (VmHWM), its CPU
 * from /proc/<pid>/stat. Prints figures; asserts nothing.
 *
 * The same run also measures the floor every start stands on: a bare node, and a node that only imports
 * `@kubernetes/client-node` (whole, and as `run` loads it: lean-client-node.ts), under the engine's flags.
 *
 * Usage: node bench/cluster-requests.bench.ts [--requests 1000 --concurrency 16
 *   --start cli,bin,image,embedded,embedded-settings] (all but `cli` run dist/: `npm run build` first)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { ClusterRequest } from "../src/api/cluster-request.ts";
import { CLUSTER_REQUEST_FINALIZERS, CLUSTER_REQUEST_LABELS } from "../src/api/constants/cluster-request.ts";
import { CLUSTERS_API_VERSION, ENGINE_API_VERSION, RESOURCES } from "../src/api/constants.ts";
import type { SchedulerConfig } from "../src/api/scheduler-config.ts";
import { kubeconfigYaml, startControlPlane } from "../src/controlplane/control-plane.ts";
import { requestFinalizer } from "../src/machines/cluster-request/cluster-claims.ts";
import { reuseConnections } from "../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { Informer } from "../src/runtime/informer.ts";
import { ENGINE_V8_FLAGS } from "../src/runtime/start/v8-flags.ts";
import { freePorts } from "../src/util/free-ports.ts";
import { pool } from "./bench-clusters.ts";
import { cpuSeconds, imageNodeOptions, sample } from "./engine-process.ts";

const root = join(import.meta.dirname, "..");

/** A program embedding the engine: `run()` of the package (dist/index.js), given the `run` flags it needs. */
const EMBEDDING_HOST = `const engine = await import(${JSON.stringify(pathToFileURL(join(root, "dist", "index.js")).href)});
// As the README asks of an embedding program: first thing, unless the host is started with the flags.
if (process.argv.includes("--with-memory-settings")) engine.execWithEngineMemorySettings();
const flag = (name) => process.argv.find((a) => a.startsWith(\`--\${name}=\`))?.split("=")[1];
const running = await engine.run({ providerName: flag("provider-name"), environment: flag("environment"),
  kubeconfig: flag("kubeconfig"), stateDirectory: flag("state-dir"), concurrency: Number(flag("concurrency")),
  schedulerConfig: { file: flag("scheduler-config") }, prepareAccessRequests: false, capi: false,
  metricsAddress: flag("metrics-bind-address"), processMetrics: true });
process.on("SIGTERM", () => void running.stop().then(() => process.exit(0)));
`;

/** The ways a user starts the engine: the node command line (after `node`) and NODE_OPTIONS. */
const STARTS = {
  cli: {
    describe: "node src/cli/main.ts run, NODE_OPTIONS unset (as the README shows)",
    node: (args: readonly string[]) => [join(root, "src", "cli", "main.ts"), ...args],
    nodeOptions: () => "",
  },
  bin: {
    describe: "node dist/cli/main.js run (the package's bin, npx openmcp-engine), NODE_OPTIONS unset",
    node: (args: readonly string[]) => [join(root, "dist", "cli", "main.js"), ...args],
    nodeOptions: () => "",
  },
  image: {
    describe: "node dist/cli/main.js run with the image's NODE_OPTIONS",
    node: (args: readonly string[]) => [join(root, "dist", "cli", "main.js"), ...args],
    nodeOptions: imageNodeOptions,
  },
  embedded: {
    describe:
      "run() of the package in a host started with plain node, nothing asked of it (run() sets --optimize-for-size late)",
    node: (args: readonly string[]) => [hostScript(), ...args],
    nodeOptions: () => "",
  },
  "embedded-settings": {
    describe: "run() of the package in a plain node host that calls execWithEngineMemorySettings() first",
    node: (args: readonly string[]) => [hostScript(), "--with-memory-settings", ...args],
    nodeOptions: () => "",
  },
} as const;
type Start = keyof typeof STARTS;

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "16" },
    start: { type: "string", default: "cli" },
  },
});
const count = Number(values.requests);
const concurrency = Number(values.concurrency);
const starts = values.start.split(",").map((start) => {
  if (!(start in STARTS)) throw new Error(`--start ${start}: one of ${Object.keys(STARTS).join(", ")}`);
  if (start !== "cli" && !existsSync(join(root, "dist", "cli", "main.js")))
    throw new Error(`--start ${start} runs dist/: npm run build first`);
  return start as Start;
});
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

/** The scheduler's configuration for the requests labelled `bench: <start>`, Clusters in `namespace`. */
function schedulerConfig(start: Start, namespace: string): SchedulerConfig {
  const template = (tenancy: "Exclusive" | "Shared", name?: string) => ({
    metadata: { namespace, ...(name ? { name } : {}) },
    spec: { profile: PROFILE, tenancy },
  });
  return {
    scope: "Cluster",
    strategy: "Balanced",
    selectors: { requests: { matchLabels: { bench: start } } },
    purposeMappings: {
      mcp: { tenancyCount: 0, template: template("Exclusive") },
      workload: { tenancyCount: 10, template: template("Shared") },
      platform: { tenancyCount: 0, template: template("Shared", "platform") },
    },
  };
}

/** The engine's process, started `start`'s way; `started` resolves once it has said so in its log. */
function startEngine(start: Start, args: readonly string[]) {
  const child: ChildProcess = spawn(process.execPath, STARTS[start].node(args), {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, NODE_OPTIONS: STARTS[start].nodeOptions() },
  });
  let stderr = "";
  let exited: string | undefined;
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000); // the log at info, as a user runs it
  });
  child.once("exit", (code, signal) => {
    exited = `the engine (${start}) exited (${signal ?? code}):\n${stderr}`;
  });
  const alive = () => {
    if (exited) throw new Error(exited);
  };
  const started = (async () => {
    while (!/"msg":"engine started"/.test(stderr)) {
      alive();
      await sleep(50);
    }
  })();
  const stop = async () => {
    if (exited) return;
    const gone = new Promise((resolveGone) => child.once("exit", resolveGone));
    child.kill("SIGTERM");
    await gone;
  };
  return { child, started, alive, stop };
}

/** Peak and current RSS of a process, and the V8 heap flags on its command line and NODE_OPTIONS. */
function memoryOf(pid: number): { peakMb: number; rssMb: number; flags: string } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  const nodeOptions =
    env.find((entry) => entry.startsWith("NODE_OPTIONS="))?.slice("NODE_OPTIONS=".length) ?? "";
  const flags = [...argv, ...nodeOptions.split(/\s+/)].filter((flag) =>
    /^--(max[-_](old|semi)[-_]space|optimize[-_]for[-_]size|no[-_]optimize[-_]for[-_]size)/.test(flag),
  );
  return {
    peakMb: Math.round(kb("VmHWM") / 1024),
    rssMb: Math.round(kb("VmRSS") / 1024),
    flags: flags.join(" "),
  };
}

const folder = mkdtempSync(join(tmpdir(), "cluster-requests-bench-"));
/** The embedding host, as a file: a process can replace itself only with a script to run again. */
function hostScript(): string {
  const file = join(folder, "host.mjs");
  if (!existsSync(file)) writeFileSync(file, EMBEDDING_HOST);
  return file;
}

/** Peak RSS of a node that runs `code` (an ES module body) with `flags`, and exits. */
function floorMb(flags: readonly string[], code: string): number {
  const probe = `${code}
    const status = (await import("node:fs")).readFileSync("/proc/self/status", "utf8");
    console.log(/^VmHWM:\\s+(\\d+) kB/m.exec(status)?.[1]);`;
  const out = execFileSync(process.execPath, [...flags, "--input-type=module", "-e", probe], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return Math.round(Number(out.trim()) / 1024);
}
/**
 * A fresh API server with the CRDs, its kubeconfig file, and clients that reuse their TLS connections as
 * the engine does (a fair bare client). Each start gets its own: an engine caches and reconciles whatever
 * it finds, so on a shared one a later start would also carry the requests and Clusters of those before.
 */
async function freshApiServer(name: string) {
  const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  const kubeconfigFile = join(folder, `${name}.kubeconfig`);
  writeFileSync(kubeconfigFile, kubeconfigYaml(controlPlane.kubeConfig));
  reuseConnections(controlPlane.kubeConfig);
  const { kubeConfig } = controlPlane;
  return {
    controlPlane,
    kubeconfigFile,
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
    core: kubeConfig.makeApiClient(CoreV1Api),
  };
}

let controlPlane = (await freshApiServer("baseline")).controlPlane;
try {
  const { kubeConfig, server } = controlPlane;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["baseline", "baseline-clusters"])
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
      body: [{ op: "add", path: "/metadata/finalizers", value: [CLUSTER_REQUEST_FINALIZERS.request] }],
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
            labels: { [CLUSTER_REQUEST_LABELS.deleteWithoutRequests]: "true" },
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

  const row = (label: string, value: string, target = "") =>
    console.log(`${label.padEnd(52)}${value.padEnd(16)}${target}`);
  row("measure", "value", "target");
  row("baseline: the minimal writes, all requests", `${(baselineMs / 1_000).toFixed(2)} s`);
  row("writes per request, baseline (incl. its create)", (baselineWrites / count).toFixed(2));
  const lean = pathToFileURL(join(root, "src", "runtime", "start", "lean-client-node-preload.ts")).href;
  row("floor: bare node, peak RSS", `${floorMb(ENGINE_V8_FLAGS, "")} MB`);
  row(
    "floor: node importing @kubernetes/client-node",
    `${floorMb(ENGINE_V8_FLAGS, 'await import("@kubernetes/client-node");')} MB`,
  );
  row(
    "floor: the same, lean (as run loads it)",
    `${floorMb([...ENGINE_V8_FLAGS, `--import=${lean}`], 'await import("@kubernetes/client-node");')} MB`,
  );

  // The engine as a user starts it, its own process each way asked for, on an API server of its own.
  for (const start of starts) {
    await controlPlane.stop();
    const fresh = await freshApiServer(start);
    controlPlane = fresh.controlPlane;
    const { kubeConfig, server } = controlPlane;
    const { custom, core, kubeconfigFile } = fresh;
    const namespace = `engine-${start}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespace({ body: { metadata: { name: `${namespace}-clusters` } } });
    const configFile = join(folder, `${start}.scheduler.json`);
    writeFileSync(configFile, JSON.stringify(schedulerConfig(start, `${namespace}-clusters`)));
    const granted = new Set<string>();
    const requests = new Informer<ClusterRequest>({
      kubeConfig,
      resource: RESOURCES.ClusterRequest,
      kind: "ClusterRequest",
      namespace,
    });
    requests.on((event) => {
      if (event.object.status?.phase === "Granted") granted.add(event.key);
    });
    await requests.start();
    const [metricsPort] = (await freePorts(1)) as [number];
    const engine = startEngine(start, [
      "run",
      "--provider-name=bench",
      "--environment=bench",
      `--kubeconfig=${kubeconfigFile}`,
      `--state-dir=${join(folder, start)}`,
      `--concurrency=${concurrency}`,
      `--scheduler-config=${configFile}`,
      "--no-prepare-access-requests",
      "--no-capi",
      "--no-leader-elect",
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      "--health-probe-bind-address=0",
    ]);
    try {
      await engine.started;
      writesBefore = await serverWrites(kubeConfig, server);
      const engineStart = performance.now();
      await pool(count, concurrency, async (i) => {
        await custom.createNamespacedCustomObject({
          ...RESOURCES.ClusterRequest,
          namespace,
          body: requestBody(`r-${i}`, namespace, PURPOSES[i % 3] ?? "mcp", { bench: start }),
        });
      });
      while (granted.size < count) {
        engine.alive();
        await sleep(10);
      }
      const engineMs = performance.now() - engineStart;
      await sleep(2_000); // let requeues and watch echoes pass before counting
      const engineWrites = (await serverWrites(kubeConfig, server)) - writesBefore;
      const memory = memoryOf(engine.child.pid ?? 0);
      const cpu = cpuSeconds([engine.child.pid ?? 0]);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const mb = (name: string) => `${Math.round((sample(metrics, name) ?? 0) / 2 ** 20)} MB`;
      console.log(`\nstarted as ${start}: ${STARTS[start].describe}`);
      row("engine: create → all Granted", `${(engineMs / 1_000).toFixed(2)} s`);
      row("ratio engine / baseline", `${(engineMs / baselineMs).toFixed(2)}×`, "≤ 1.5×");
      row("writes per request, engine (incl. its create)", (engineWrites / count).toFixed(2));
      row("engine process: CPU (user + system), start to end", `${cpu.toFixed(1)} s`);
      row("engine process: peak RSS (VmHWM)", `${memory.peakMb} MB`, "≤ 150 MB");
      row("engine process: RSS at the end", `${memory.rssMb} MB`);
      row(
        "engine process: V8 heap used / total at the end",
        `${mb("nodejs_heap_size_used_bytes")} / ${mb("nodejs_heap_size_total_bytes")}`,
      );
      row("engine process: external memory at the end", mb("nodejs_external_memory_bytes"));
      row("engine process: V8 flags on its command line", memory.flags || "none");
    } finally {
      requests.stop();
      await engine.stop();
    }
  }
} finally {
  await controlPlane.stop();
  rmSync(folder, { recursive: true, force: true });
}
