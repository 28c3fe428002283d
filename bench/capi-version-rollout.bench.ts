/**
 * Benchmark (real infrastructure): a version Rollout over `capi` Clusters on Docker machines, in two stages. Cluster
 * API's own managers (core with ClusterTopology, kubeadm control plane and bootstrap, the Docker provider CAPD) on a
 * real API server; the engine in this process with the `capi` backend; N Clusters (default 2) of a ProviderConfig
 * offering 1.36.3 and 1.37.2 on the `docker-kubeadm` class, made at 1.36.3; then one Rollout to 1.37.2 — the canary
 * (1 Cluster) first and alone, then the stage `fleet` — with `maxUnavailable: 1` and a Ready gate between stages.
 * Kubernetes upgrades each cluster by machines: KubeadmControlPlane and the MachineDeployment replace theirs with
 * machines of the kind node image kindest/node:v1.37.2, which `OPENMCP_KUBE_VERSION=v1.37.2
 * hack/containers/ensure.sh kind-node-image` builds offline (once per machine, 20–40 minutes; minutes when its binaries
 * are cached), removed again at the end if this run made it (see below).
 *
 * Watched every 2 s: each Cluster's Ready condition, its target's progress in the Rollout and the versions Cluster
 * API reports. Prints, per Cluster, the time to Ready at 1.36.3 (the baseline, a fresh create) and the time its
 * upgrade took (the Rollout asking it → Ready at 1.37.2), the ratio of the two, each stage's span, the most targets
 * changing or not Ready at once, and what the upgraded API servers and nodes say of their versions. Fails (exit 1)
 * if the run does not complete, a stage starts before the previous one is done, more than `maxUnavailable` targets
 * change at once, or a cluster does not serve 1.37.2 at the end.
 *
 * Usage: node bench/capi-version-rollout.bench.ts [--clusters 2] [--to 1.37.2]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CoreV1Api, KubeConfig, VersionApi } from "@kubernetes/client-node";
import type { Cluster } from "../src/api/cluster.ts";
import { ROLLOUT_RESOURCE } from "../src/api/constants/rollout.ts";
import { RESOURCES } from "../src/api/constants.ts";
import type { Rollout } from "../src/api/rollout.ts";
import { createBackend } from "../src/providers/capi.ts";
import { CAPI_BACKEND_KEYS, type TopologyCluster } from "../src/providers/capi-topology.ts";
import { apiSecretReader } from "../src/runtime/api-server/secret-reader.ts";
import { Engine } from "../src/runtime/engine.ts";
import { buildingKindsTimed } from "../src/runtime/kinds/registry.ts";
import { createLogger } from "../src/runtime/logger.ts";
import { aBackendContext } from "../test/support/backend-context.ts";
import { aCluster, aProviderConfig } from "../test/support/builders.ts";
import { dockerKubeadmClass, dockerKubeadmSettings } from "../test/support/capi-classes.ts";
import { removeContainers, startCapiManagement } from "../test/support/capi-management.ts";
import { isReady } from "../test/support/cluster-harness.ts";
import { containerToolchain } from "../test/support/containers.ts";

const { values } = parseArgs({
  options: { clusters: { type: "string", default: "2" }, to: { type: "string", default: "1.37.2" } },
});
const count = Number(values.clusters);
const FROM = "1.36.3";
const TO = values.to;
const NS = "rollout-bench";
const CAPI_NS = "rollout-bench-capi";
const PROVIDER = "capi-bench";
const PROFILE = `bench.${PROVIDER}.docker`;
/** Every Cluster is named so; CAPD names machine and load-balancer containers after them. */
const PREFIX = "caprb-";
const ROLLOUT = "to-next-minor";
const names = Array.from({ length: count }, (_, i) => `${PREFIX}${i}`);
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

// The second node image: kindest/node:v<TO>, built offline like the pinned one (its binaries cached per machine).
// Removed again at the end when this run made it: the kind backend offers every kindest/node image the host
// holds, and kind v0.30 cannot create a 1.37 cluster (it writes kubeadm's v1beta3 configuration, which kubeadm
// 1.37 refuses), so a 1.37 image left behind would be offered to every kind Cluster made on this machine.
const tools = containerToolchain();
const nodeImage = `kindest/node:v${TO}`;
const hadNodeImage = (() => {
  try {
    execFileSync(tools.docker, ["image", "inspect", nodeImage], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
log(`ensuring the kind node image ${nodeImage} (first time on a machine: 20-40 min; then minutes)`);
execFileSync(join(import.meta.dirname, "..", "hack", "containers", "ensure.sh"), ["kind-node-image"], {
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, DOCKER: tools.docker, OPENMCP_KUBE_VERSION: `v${TO}` },
  timeout: 3_600_000,
});

await removeContainers(PREFIX);
const management = await startCapiManagement({
  classes: dockerKubeadmClass({ kubernetesVersions: [`v${FROM}`, `v${TO}`] }),
  namespaces: [NS, CAPI_NS],
  docker: true,
});
const stateDir = mkdtempSync(join(tmpdir(), "capi-rollout-bench-"));
const kubeConfig = management.controlPlane.kubeConfig;
const engineLog: string[] = [];
const engine = new Engine({
  kubeConfig,
  providerName: PROVIDER,
  environment: "bench",
  backend: await createBackend(
    aBackendContext(
      stateDir,
      { kubeconfig: management.controlPlane.kubeconfigPath },
      {
        log: createLogger({ write: (line) => engineLog.push(line) }),
        readSecret: apiSecretReader(kubeConfig),
      },
    ),
  ),
  kindSettings: buildingKindsTimed({ pollMs: 2_000, retryMs: 2_000, resyncMs: 5_000 }),
  log: createLogger({ write: (line) => engineLog.push(line) }),
});

const custom = management.custom;
const readCluster = async (name: string) =>
  (await custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name })) as Cluster;
const readRollout = async () =>
  (await custom.getNamespacedCustomObject({ ...ROLLOUT_RESOURCE, namespace: NS, name: ROLLOUT })) as Rollout;
/** The CAPI Cluster of Cluster `name` and the versions Cluster API reports its control plane at. */
async function capiOf(name: string): Promise<TopologyCluster | undefined> {
  return (await management.capiClusters(CAPI_NS)).find(
    (c) => c.metadata.labels?.[CAPI_BACKEND_KEYS.clusterNameLabel] === name,
  );
}
const controlPlaneVersions = (capi: TopologyCluster | undefined) =>
  (capi?.status?.controlPlane?.versions ?? []).map((v) => v.version).join(",");

let failed: string | undefined;
try {
  await engine.start();
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({
      name: "docker",
      backend: "capi",
      providerRef: { name: PROVIDER },
      supportedVersions: [{ version: TO }, { version: FROM }],
      defaultVersion: FROM,
      settings: dockerKubeadmSettings(CAPI_NS),
    }),
  });

  // The baseline: N fresh Clusters at FROM, made at once, each timed to Ready.
  const created = performance.now();
  for (const name of names)
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({ name, namespace: NS, profile: PROFILE, tenancy: "Exclusive", version: FROM }),
    });
  const readyAt = new Map<string, number>();
  while (readyAt.size < names.length) {
    if (performance.now() - created > 1_800_000)
      throw new Error("Clusters not Ready at 1.36.3 in 30 minutes");
    for (const name of names)
      if (!readyAt.has(name) && isReady(await readCluster(name))) {
        readyAt.set(name, performance.now() - created);
        log(`${name} Ready at ${FROM} after ${seconds(performance.now() - created)}`);
      }
    await sleep(2_000);
  }

  // The Rollout: canary 1, then the stage `fleet`; at most one target changing or not Ready at once.
  const started = performance.now();
  await custom.createNamespacedCustomObject({
    ...ROLLOUT_RESOURCE,
    namespace: NS,
    body: {
      apiVersion: `${ROLLOUT_RESOURCE.group}/${ROLLOUT_RESOURCE.version}`,
      kind: "Rollout",
      metadata: { name: ROLLOUT, namespace: NS },
      spec: {
        profiles: [PROFILE],
        version: TO,
        canary: 1,
        stages: [{ name: "fleet", share: 100 }],
        maxUnavailable: 1,
        gates: { readyForSeconds: 30 },
        timeoutSeconds: 1_800,
      },
    },
  });
  const changingSince = new Map<string, number>();
  const upgraded = new Map<string, number>();
  const stageSpan = new Map<string, { from: number; to?: number }>();
  let mostUnavailable = 0;
  let samples = 0;
  for (;;) {
    if (performance.now() - started > 3_600_000)
      throw new Error("the Rollout did not complete in 60 minutes");
    const rollout = await readRollout();
    const clusters = await Promise.all(names.map(readCluster));
    const now = performance.now() - started;
    samples++;
    const targets = rollout.status?.targets ?? [];
    // Unavailable: a target changing, or a Cluster not Ready (the Rollout's own count of maxUnavailable).
    const unavailable = names.filter(
      (name, i) =>
        targets.find((t) => t.name === name)?.progress === "changing" || !isReady(clusters[i] as Cluster),
    );
    mostUnavailable = Math.max(mostUnavailable, unavailable.length);
    for (const target of targets) {
      if (target.progress === "changing" && !changingSince.has(target.name)) {
        changingSince.set(target.name, now);
        const stage = stageSpan.get(target.stage) ?? { from: now };
        stageSpan.set(target.stage, stage);
        for (const [name, span] of stageSpan)
          if (name !== target.stage && span.to === undefined)
            throw new Error(`stage ${target.stage} started while ${name} was not done`);
        log(`${target.name} (stage ${target.stage}) asked for ${TO}`);
      }
      if (target.progress === "done" && !upgraded.has(target.name)) {
        upgraded.set(target.name, now);
        const capi = await capiOf(target.name);
        log(`${target.name} done at ${TO}: control plane at ${controlPlaneVersions(capi)}`);
      }
      if (target.progress === "failed") throw new Error(`${target.name} failed: ${target.message ?? ""}`);
    }
    for (const progress of rollout.status?.stages ?? []) {
      const span = stageSpan.get(progress.name);
      if (span && span.to === undefined && progress.done + progress.skipped === progress.targets)
        span.to = now;
    }
    if (mostUnavailable > 1)
      throw new Error(`${unavailable.join(", ")} unavailable at once (maxUnavailable 1)`);
    if (rollout.status?.phase === "Succeeded") break;
    if (rollout.status?.phase === "Halted" || rollout.status?.phase === "Aborted")
      throw new Error(`the Rollout halted: ${JSON.stringify(rollout.status?.conditions)}`);
    await sleep(2_000);
  }
  const total = performance.now() - started;

  // What the upgraded clusters say: their API servers' /version and their nodes' kubelets.
  const served: string[] = [];
  for (const name of names) {
    const capi = await capiOf(name);
    const secret = await management.core.readNamespacedSecret({
      namespace: CAPI_NS,
      name: `${capi?.metadata.name}-kubeconfig`,
    });
    const workload = new KubeConfig();
    workload.loadFromString(Buffer.from(secret.data?.value ?? "", "base64").toString("utf8"));
    const version = (await workload.makeApiClient(VersionApi).getCode()).gitVersion;
    const nodes = (await workload.makeApiClient(CoreV1Api).listNode()).items.map(
      (node) => `${node.metadata?.name}=${node.status?.nodeInfo?.kubeletVersion}`,
    );
    served.push(`${name}: API server ${version}; kubelets ${nodes.join(" ")}`);
    if (version !== `v${TO}`) failed = `${name}'s API server serves ${version}, not v${TO}`;
  }

  console.log(
    `\nversion rollout ${FROM} → ${TO}, ${count} capi Clusters on Docker machines (CAPD), canary 1 then fleet`,
  );
  console.log("Cluster        create→Ready   asked→Ready at new   ratio upgrade/create   stage");
  const rollout = await readRollout();
  for (const name of names) {
    const create = readyAt.get(name) ?? Number.NaN;
    const upgrade = (upgraded.get(name) ?? Number.NaN) - (changingSince.get(name) ?? Number.NaN);
    const stage = rollout.status?.targets?.find((t) => t.name === name)?.stage ?? "?";
    console.log(
      `${name.padEnd(14)} ${seconds(create).padStart(12)}   ${seconds(upgrade).padStart(18)}   ${(upgrade / create).toFixed(2).padStart(20)}   ${stage}`,
    );
  }
  for (const [name, span] of stageSpan)
    console.log(`stage ${name}: ${seconds(span.from)} → ${span.to === undefined ? "?" : seconds(span.to)}`);
  console.log(
    `whole run: ${seconds(total)}; most targets unavailable at once: ${mostUnavailable} (of ${samples} samples, 2 s apart)`,
  );
  for (const line of served) console.log(line);
} catch (error) {
  failed = String(error);
} finally {
  for (const name of names)
    await custom
      .deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name })
      .catch(() => undefined);
  const deadline = performance.now() + 600_000;
  while (performance.now() < deadline && (await management.capiClusters(CAPI_NS)).length > 0)
    await sleep(2_000);
  await engine.stop();
  await management.stop();
  const left = await removeContainers(PREFIX);
  if (left.length > 0) console.log(`removed containers left behind: ${left.join(", ")}`);
  rmSync(stateDir, { recursive: true, force: true });
  if (!hadNodeImage) execFileSync(tools.docker, ["rmi", nodeImage], { stdio: "ignore" });
}
if (failed) {
  console.error(`FAILED: ${failed}`);
  console.error(engineLog.slice(-40).join("\n"));
  process.exitCode = 1;
}
