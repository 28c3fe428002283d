/** `openmcp-engine up` as a user runs it: a usable kubeconfig, CRDs served, a clean stop on Ctrl-C, clear flag errors. */
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { RESOURCES } from "../../src/api/constants.ts";
import { objectSpanIds, parseTraceparent } from "../../src/runtime/tracing/trace-ids.ts";
import { aCluster } from "../support/builders.ts";
import { containersNamed, containerToolchain } from "../support/containers.ts";
import { eventually } from "../support/eventually.ts";
import { coverage, type Jaeger, startJaeger } from "../support/jaeger.ts";
import { processesMentioning, waitUntilGone } from "../support/processes.ts";

const main = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");
const examples = join(import.meta.dirname, "..", "..", "examples");

/**
 * `up`'s kind demo (examples/demo-kind) with only the Cluster its AccessRequest names, in `folder`: the demo's
 * second Cluster would be one more kind cluster of the same profile, a minute on this machine that proves nothing
 * `up` adds (kind-clusters.heavy.test.ts proves the kind backend's clusters).
 */
function kindDemoOf(folder: string, cluster: string): string {
  const source = join(examples, "demo-kind");
  const demo = join(folder, "demo-kind");
  mkdirSync(demo);
  for (const file of readdirSync(source)) {
    const documents = readFileSync(join(source, file), "utf8").split(/^---$/m);
    const kept = documents.filter(
      (document) =>
        !/^kind: Cluster$/m.test(document) || new RegExp(`^  name: ${cluster}$`, "m").test(document),
    );
    writeFileSync(join(demo, file), kept.join("---"));
  }
  return demo;
}

/**
 * One trace from the ClusterRequest demo/team-a to the kubeconfig Secret of the AccessRequest demo/viewer that
 * names it, as Jaeger stored it: the request's, the AccessRequest's spans and the command that wrote the Secret,
 * covering at least 95 % of the time from the request's creation to that command's end; and the Cluster
 * demo/platform in the trace of the request that made it.
 */
async function expectOneTrace(kubeconfig: string, jaeger: Jaeger): Promise<void> {
  const management = new KubeConfig();
  management.loadFromFile(kubeconfig);
  const custom = management.makeApiClient(CustomObjectsApi);
  const read = (resource: { group: string; version: string; plural: string }, name: string) =>
    custom.getNamespacedCustomObject({ ...resource, namespace: "demo", name }) as Promise<{
      metadata: { uid: string; creationTimestamp: string; annotations?: Record<string, string> };
    }>;
  const request = await read(RESOURCES.ClusterRequest, "team-a");
  const { traceId } = objectSpanIds(request.metadata.uid, undefined);
  const spans = await eventually(
    async () => {
      const found = await jaeger.trace(traceId);
      const names = new Set(found.map((span) => span.operationName));
      return (
        ["ClusterRequest demo/team-a", "AccessRequest demo/viewer", "command issueCredential"].every((name) =>
          names.has(name),
        ) && found
      );
    },
    { what: `trace ${traceId} of ClusterRequest demo/team-a in Jaeger`, timeoutMs: 30_000 },
  );
  // The last issue wrote the Secret as it is (an earlier one may have failed and been retried).
  const written = Math.max(
    ...spans
      .filter((span) => span.operationName === "command issueCredential")
      .map((span) => span.startTime + span.duration),
  );
  const created = Date.parse(request.metadata.creationTimestamp) * 1_000;
  const secret = await management
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ namespace: "demo", name: "viewer.kubeconfig" });
  // The Secret came of that command (API times are whole seconds).
  expect(Date.parse(String(secret.metadata?.creationTimestamp)) * 1_000).toBeLessThanOrEqual(written);
  const covered = coverage(spans, created, written);
  console.log(
    `trace of demo/team-a: ${spans.length} spans cover ${(covered * 100).toFixed(1)} % of the ${((written - created) / 1e6).toFixed(1)} s from the request to its Secret`,
  );
  expect(covered).toBeGreaterThanOrEqual(0.95);
  for (const name of ["reconcile AccessRequest", "reconcile ClusterRequest"])
    expect(spans.map((span) => span.operationName)).toContain(name);

  const platform = await read(RESOURCES.Cluster, "platform");
  const parent = parseTraceparent(platform.metadata.annotations?.["engine.openmcp.cloud/traceparent"]);
  if (!parent) throw new Error("Cluster demo/platform carries no traceparent of the request that made it");
  const made = await eventually(
    async () => {
      const found = await jaeger.trace(parent.traceId);
      return found.some((span) => span.operationName === "command create") && found;
    },
    { what: "the trace of the request that made Cluster demo/platform", timeoutMs: 30_000 },
  );
  const names = made.map((span) => span.operationName);
  expect(names).toContain("Cluster demo/platform");
  expect(names.some((name) => /^ClusterRequest demo\/team-[ab]$/.test(name))).toBe(true);
}

describe("openmcp-engine up", () => {
  /** Runs `up` with `args` until its demo is Ready; returns what it printed and how to stop it. */
  async function upUntilReady(
    args: string[],
    readyLine: string,
    timeoutMs = 110_000,
    env: NodeJS.ProcessEnv = {},
  ) {
    const folder = mkdtempSync(join(tmpdir(), "up-test-"));
    const kubeconfig = join(folder, "kubeconfig");
    const child = spawn(
      process.execPath,
      [main, "up", "--kubeconfig-out", kubeconfig, "--log", join(folder, "engine.log"), ...args],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`up exited early:\n${output}`);
        return output.includes(readyLine);
      },
      { what: `up to print "${readyLine}"`, timeoutMs },
    );
    return { child, folder, kubeconfig, exited, output: () => output };
  }

  /** SIGINT, then: exit code 0, and no process or data of the management control plane left. */
  async function stopAndCheck(up: Awaited<ReturnType<typeof upUntilReady>>, extraPids: number[] = []) {
    const directory = /logs:\s+(\S+)\/\{etcd/.exec(up.output())?.[1] ?? "";
    expect(existsSync(directory)).toBe(true);
    const pids = [...up.output().matchAll(/(?:etcd|kube-apiserver) pid (\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    up.child.kill("SIGINT");
    expect(await up.exited).toBe(0);
    expect(up.output()).toContain("SIGINT: stopping the control plane");
    await waitUntilGone([...pids, ...extraPids], directory);
  }

  it("serves the CRDs, brings the simulated demo to Ready and stops everything on SIGINT", async () => {
    const up = await upUntilReady(
      ["--backend=simulated", "--backend-option=delay=1s"],
      "All 3 Clusters are Ready",
    );
    try {
      expect(up.output()).toContain(`kubectl --kubeconfig ${up.kubeconfig} get crds`);
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(up.kubeconfig);
      const crds = await kubeConfig.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition();
      expect(crds.items.map((crd) => crd.metadata?.name)).toContain("clusters.clusters.openmcp.cloud");
      await eventually(() => expect(up.output()).toMatch(/demo\/legacy\s+ready\s+Ready\s+1\.32\.10/), {
        what: "the live table's row of demo/legacy",
        timeoutMs: 5_000,
      });
      await stopAndCheck(up);
    } finally {
      if (up.child.exitCode === null) up.child.kill("SIGKILL");
      rmSync(up.folder, { recursive: true, force: true });
    }
  }, 180_000); // up's own wait for Ready is 110 s, then the SIGINT's

  it("by default makes each demo Cluster a real API server, reachable with the kubeconfig it writes, and traces it", async () => {
    // Its traces go to a real OTLP receiver, configured as openMCP's operator is: OTEL_EXPORTER_OTLP_ENDPOINT only.
    const jaeger = await startJaeger();
    const up = await upUntilReady([], "All 2 Clusters are Ready", 110_000, {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpGrpc,
    });
    try {
      const file = /demo\/platform: kubectl --kubeconfig (\S+) get namespaces/.exec(up.output())?.[1] ?? "";
      const cluster = new KubeConfig();
      cluster.loadFromFile(file);
      const namespaces = await cluster.makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("default");
      const server = cluster.getCurrentCluster()?.server ?? "";
      const port = new URL(server).port;
      const clusterPids = processesMentioning(`--secure-port=${port}`);
      expect(clusterPids).toHaveLength(1);
      // The demo asked for its Clusters by ClusterRequest and for access by requestRef: team-a's request
      // shares demo/platform, and its AccessRequest is granted there.
      await eventually(
        () => expect(up.output()).toContain("AccessRequest demo/viewer is Granted on Cluster demo/platform"),
        { what: "the demo's AccessRequest Granted", timeoutMs: 60_000 },
      );
      await expectOneTrace(up.kubeconfig, jaeger);
      // …and its OIDC AccessRequest: alice, a reader of the demo identity provider, may view, nothing more.
      const alice = await eventually(
        () =>
          /allowed:\s+kubectl --kubeconfig (\S+alice\.kubeconfig) -n team-a get configmaps/.exec(
            up.output(),
          )?.[1] ?? false,
        { what: "the demo's OIDC AccessRequest Granted", timeoutMs: 60_000 },
      );
      const asAlice = new KubeConfig();
      asAlice.loadFromFile(alice);
      const core = asAlice.makeApiClient(CoreV1Api);
      const code = (call: Promise<unknown>) =>
        call.then(
          () => 200,
          (error: { code?: number }) => error.code,
        );
      await eventually(
        async () => expect(await code(core.listNamespacedConfigMap({ namespace: "team-a" }))).toBe(200),
        {
          what: "alice lists configmaps with her OIDC token",
        },
      );
      expect(await code(core.listNamespacedSecret({ namespace: "team-a" }))).toBe(403);

      // A Cluster made later gets its admin kubeconfig once Ready, and loses it when deleted.
      const management = new KubeConfig();
      management.loadFromFile(up.kubeconfig);
      const custom = management.makeApiClient(CustomObjectsApi);
      const later = { ...RESOURCES.Cluster, namespace: "demo", name: "later" };
      await custom.createNamespacedCustomObject({
        ...later,
        body: aCluster({ name: "later", namespace: "demo", profile: "local.local.demo" }),
      });
      const laterFile = await eventually(
        () =>
          /Cluster demo\/later is Ready: kubectl --kubeconfig (\S+) get namespaces/.exec(up.output())?.[1] ??
          false,
        { what: "the admin kubeconfig of demo/later", timeoutMs: 60_000 },
      );
      const laterCluster = new KubeConfig();
      laterCluster.loadFromFile(laterFile);
      const laterNamespaces = await laterCluster.makeApiClient(CoreV1Api).listNamespace();
      expect(laterNamespaces.items.map((ns) => ns.metadata?.name)).toContain("default");
      await custom.deleteNamespacedCustomObject(later);
      await eventually(() => up.output().includes(`Cluster demo/later is gone: removed ${laterFile}`), {
        what: "the admin kubeconfig of demo/later removed",
        timeoutMs: 60_000,
      });
      expect(existsSync(laterFile)).toBe(false);
      await stopAndCheck(up, clusterPids);
    } finally {
      if (up.child.exitCode === null) up.child.kill("SIGKILL");
      rmSync(up.folder, { recursive: true, force: true });
      await jaeger.stop();
    }
  }, 240_000);

  it("with --backend kind makes the demo's Cluster a real kind cluster, grants access there, and removes it on SIGINT", async () => {
    const demoFolder = mkdtempSync(join(tmpdir(), "up-kind-demo-"));
    const up = await upUntilReady(
      ["--backend=kind", `--demo-dir=${kindDemoOf(demoFolder, "workload")}`],
      "All 1 Clusters are Ready",
      500_000,
    );
    try {
      const file = /demo\/workload: kubectl --kubeconfig (\S+) get namespaces/.exec(up.output())?.[1] ?? "";
      const cluster = new KubeConfig();
      cluster.loadFromFile(file);
      const nodes = await cluster.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((node) => node.status?.nodeInfo?.kubeletVersion)).toEqual([
        `v${containerToolchain().kubernetesVersion}`,
      ]);
      await eventually(
        () => expect(up.output()).toContain("AccessRequest demo/viewer is Granted on Cluster demo/workload"),
        { what: "the demo's AccessRequest Granted", timeoutMs: 60_000 },
      );
      // kind names a cluster's node container as its node.
      const nodeContainer = nodes.items[0]?.metadata?.name ?? "";
      expect(await containersNamed(nodeContainer)).toEqual([nodeContainer]);
      await stopAndCheck(up);
      expect(up.output()).toContain("deleting the backend's cluster of demo/workload");
      expect(await containersNamed(nodeContainer)).toEqual([]);
    } finally {
      if (up.child.exitCode === null) up.child.kill("SIGKILL");
      rmSync(up.folder, { recursive: true, force: true });
      rmSync(demoFolder, { recursive: true, force: true });
    }
  }, 700_000);

  it("with --capi runs Cluster API's own manager, which moves the demo's CAPI Clusters to Provisioned and Available", async () => {
    // Cluster API's core manager, the demo's control planes and its CAPI Clusters start beside the suite's other
    // files: on two cores with four files at once this took more than 110 s (2026-11-28); the whole test alone, 56 s.
    const up = await upUntilReady(
      ["--capi"],
      "Cluster API Cluster capi-demo/workload is Provisioned",
      240_000,
    );
    try {
      const capiPid = Number(/Cluster API: \S+ core manager, pid (\d+)/.exec(up.output())?.[1]);
      expect(capiPid).toBeGreaterThan(0);
      const file =
        /capi-demo\/workload[^\n]*\n\s+from Secret workload-kubeconfig: kubectl --kubeconfig (\S+) get namespaces/.exec(
          up.output(),
        )?.[1];
      const workload = new KubeConfig();
      workload.loadFromFile(file ?? "");
      const namespaces = await workload.makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("kube-system");
      const port = new URL(workload.getCurrentCluster()?.server ?? "").port;
      // The managed control plane of the demo: an EngineControlPlane, which Cluster API calls Available.
      const managed = await eventually(
        () =>
          /capi-demo\/managed is Available[^\n]*\n\s+from Secret managed-kubeconfig: kubectl --kubeconfig (\S+) get namespaces/.exec(
            up.output(),
          )?.[1] ?? false,
        { what: "the demo's EngineControlPlane Cluster Available", timeoutMs: 120_000 },
      );
      const managedAccess = new KubeConfig();
      managedAccess.loadFromFile(managed);
      await managedAccess.makeApiClient(CoreV1Api).listNamespace();
      const managedPort = new URL(managedAccess.getCurrentCluster()?.server ?? "").port;
      await stopAndCheck(up, [
        capiPid,
        ...processesMentioning(`--secure-port=${port}`),
        ...processesMentioning(`--secure-port=${managedPort}`),
      ]);
    } finally {
      if (up.child.exitCode === null) up.child.kill("SIGKILL");
      rmSync(up.folder, { recursive: true, force: true });
    }
  }, 480_000);

  it("rejects an unknown flag with exit code 2 and the usage", () => {
    const result = spawnSync(process.execPath, [main, "up", "--no-such-flag"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Unknown option '--no-such-flag'");
    expect(result.stderr).toContain("Usage: openmcp-engine up");
  });

  it("rejects an unknown command with exit code 2", () => {
    const result = spawnSync(process.execPath, [main, "fly"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown command "fly"');
  });
});
