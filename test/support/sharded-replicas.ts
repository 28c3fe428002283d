/**
 * Sharded replicas as operators run them, for tests: `run --sharding` processes with the journaling
 * backend (one journal per replica, one shared simulated world), and what their /metrics say.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { aCluster, aProviderConfig } from "./builders.ts";
import { listeningPorts, startEngineCli } from "./processes.ts";

const JOURNALING_BACKEND = join(import.meta.dirname, "journaling-backend.ts");

/** A fresh API server with the CRDs, `namespace`, and the ProviderConfig `sim` (simulated backend). */
export async function startShardedWorld(
  namespace: string,
): Promise<{ controlPlane: ControlPlane; custom: CustomObjectsApi }> {
  const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
  return { controlPlane, custom };
}

/** A replica process. */
export interface ShardedReplica {
  readonly name: string;
  readonly child: ChildProcess;
  /** The port of its /metrics, once found (it binds port 0: a port picked for it could be taken by another file's process first). */
  metricsPort?: number;
  /** Everything it printed (JSON log lines). */
  readonly output: () => string;
  /** When the process ended (ms since the epoch), once it has. */
  exitedAt?: number;
}

/** How to start one. */
export interface ShardedReplicaProps {
  /** Its POD_NAME (run adds a random suffix for the identity) and its journal's `replica`. */
  readonly name: string;
  readonly kubeconfig: string;
  /** Holds the journals (`<name>.jsonl`) and the shared state folder (`state`). */
  readonly folder: string;
  /** The provider's name, which is also the ring's. */
  readonly provider: string;
  readonly leaseMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Default `warn`. */
  readonly logLevel?: string;
}

/** Starts `run --sharding` with the journaling backend (500 ms per call), 8 reconciles at once. */
export async function startShardedReplica(props: ShardedReplicaProps): Promise<ShardedReplica> {
  const { child, output } = startEngineCli(
    [
      "run",
      `--provider-name=${props.provider}`,
      "--environment=test",
      `--kubeconfig=${props.kubeconfig}`,
      `--state-dir=${join(props.folder, "state")}`,
      `--backend=${JOURNALING_BACKEND}`,
      `--backend-option=journal=${journalOf(props.folder, props.name)}`,
      `--backend-option=replica=${props.name}`,
      "--backend-option=delay=500ms",
      "--sharding",
      "--leader-election-namespace=default",
      `--lease-duration=${props.leaseMs / 1_000}s`,
      `--renew-deadline=${props.renewDeadlineMs / 1_000}s`,
      `--retry-period=${props.retryPeriodMs / 1_000}s`,
      "--concurrency=8",
      "--no-schedule",
      `--log-level=${props.logLevel ?? "warn"}`,
      "--metrics-bind-address=127.0.0.1:0",
      "--health-probe-bind-address=0",
    ],
    { POD_NAME: props.name },
  );
  const replica: ShardedReplica = { name: props.name, child, output };
  child.once("exit", () => {
    replica.exitedAt = Date.now();
  });
  return replica;
}

/** The journal file of replica `name`. */
export function journalOf(folder: string, name: string): string {
  return join(folder, `${name}.jsonl`);
}

/** The uids of the clusters the shared simulated world created, in order (its own log: one line per cluster made). */
export function clustersCreated(folder: string): string[] {
  const [world] = readdirSync(join(folder, "state"));
  return readFileSync(join(folder, "state", world ?? "", "created.log"), "utf8")
    .split("\n")
    .filter(Boolean);
}

/** How long a replica's /metrics may take to answer. */
const METRICS_TIMEOUT_MS = 20_000;

/** The replica's /metrics; a replica that has ended says so, with how and its last log lines, not a bare "fetch failed". */
async function metricsOf(replica: ShardedReplica): Promise<string> {
  try {
    replica.metricsPort ??= metricsPortOf(replica);
    // Bounded: a replica that stops answering fails the caller's wait with this, not the test's timeout with nothing.
    const response = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, {
      signal: AbortSignal.timeout(METRICS_TIMEOUT_MS),
    });
    return await response.text();
  } catch (error) {
    const { exitCode, signalCode } = replica.child;
    if (exitCode === null && signalCode === null) throw error;
    const last = replica.output().trimEnd().split("\n").slice(-5).join("\n");
    throw new Error(
      `replica ${replica.name} has ended (${signalCode ?? `exit ${exitCode}`}); its last lines:\n${last}`,
    );
  }
}

/** The one port the replica listens on (health probes are off); throws until it listens. */
function metricsPortOf(replica: ShardedReplica): number {
  const ports = replica.child.pid === undefined ? [] : listeningPorts(replica.child.pid);
  if (ports.length !== 1)
    throw new Error(`replica ${replica.name} listens on ${ports.length} ports, not one`);
  return ports[0] as number;
}

/** One sample of the replica's /metrics (0 when absent). */
export async function metricOf(replica: ShardedReplica, name: string, labels: string): Promise<number> {
  const text = await metricsOf(replica);
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** The ring's members as the replica sees them, by name (without run's random suffix), sorted. */
export async function shardMembersOf(replica: ShardedReplica): Promise<string[]> {
  const text = await metricsOf(replica);
  return text
    .split("\n")
    .filter((l) => l.startsWith("openmcp_engine_shard_members{"))
    .map((l) => /identity="([^"]+)"/.exec(l)?.[1] ?? "")
    .map(nameOfIdentity)
    .sort();
}

/** The replica's own shard identity (its name and run's random suffix), as its /metrics say. */
export async function shardIdentityOf(replica: ShardedReplica): Promise<string> {
  const self = (await metricsOf(replica))
    .split("\n")
    .find((l) => l.startsWith("openmcp_engine_shard_members{") && l.includes('self="true"'));
  const identity = self && /identity="([^"]+)"/.exec(self)?.[1];
  if (!identity) throw new Error(`replica ${replica.name} does not say its shard identity yet`);
  return identity;
}

/** How many objects of `kind` labelled as its provider's the replica's cache holds, every phase (its shard's and the others'). */
export async function cachedOf(replica: ShardedReplica, kind: string): Promise<number> {
  return (await metricsOf(replica))
    .split("\n")
    .filter((l) => l.startsWith(`openmcp_engine_objects{kind="${kind}",`))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

/** The replica name in a shard identity: run appends `_<8 hex digits>` to the pod name. */
export function nameOfIdentity(identity: string): string {
  return identity.replace(/_[0-9a-f]{8}$/, "");
}

/** Creates `<prefix>-0` … `<prefix>-<count − 1>` (profile `test.<provider>.sim`), 16 at a time. */
export async function createClusters(
  custom: CustomObjectsApi,
  props: {
    readonly namespace: string;
    readonly provider: string;
    readonly prefix: string;
    readonly count: number;
  },
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < props.count) {
        const name = `${props.prefix}-${next++}`;
        await custom.createNamespacedCustomObject({
          ...RESOURCES.Cluster,
          namespace: props.namespace,
          body: aCluster({ name, namespace: props.namespace, profile: `test.${props.provider}.sim` }),
        });
      }
    }),
  );
}
