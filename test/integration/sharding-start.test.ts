/**
 * Sharded replicas that start together: 300 Clusters wait on a real API server, then three `run
 * --sharding` processes start at the same moment. Each must see the ring as the others do before it
 * works: each joins knowing all three, and from the backend journal no Cluster is worked on by two
 * replicas at once, none moves from one replica to another while the ring forms, and every Cluster is
 * Ready and created once. (Kills, partitions and a late joiner: sharding.test.ts.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABELS } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { LEASES, type Lease } from "../../src/runtime/lease.ts";
import { eventually } from "../support/eventually.ts";
import { handovers, overlappingCalls } from "../support/journal-checks.ts";
import { readJournals } from "../support/journaling-backend.ts";
import {
  clustersCreated,
  createClusters,
  journalOf,
  metricOf,
  nameOfIdentity,
  type ShardedReplica,
  startShardedReplica,
  startShardedWorld,
} from "../support/sharded-replicas.ts";

const NAMESPACE = "fleet";
const PROVIDER = "together";
const CLUSTERS = 300;
const NAMES = ["a", "b", "c"];
/** Replicas whose Leases are created within a retry period of each other meet before any works. */
const RETRY_PERIOD_MS = 4_000;
const folder = mkdtempSync(join(tmpdir(), "sharding-start-"));

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const replicas: ShardedReplica[] = [];

beforeAll(async () => {
  ({ controlPlane, custom } = await startShardedWorld(NAMESPACE));
  await createClusters(custom, { namespace: NAMESPACE, provider: PROVIDER, prefix: "c", count: CLUSTERS });
}, 120_000);

afterAll(async () => {
  for (const replica of replicas) if (replica.exitedAt === undefined) replica.child.kill("SIGKILL");
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** What each replica (by name) logged first with `message`, and when (ms since the epoch), from its JSON log lines. */
function logged(message: string): Map<string, { at: number; members?: string[] }> {
  const found = new Map<string, { at: number; members?: string[] }>();
  for (const replica of replicas) {
    for (const line of replica.output().split("\n")) {
      if (!line.startsWith("{")) continue;
      const record = JSON.parse(line) as { msg?: string; ts?: string; members?: string[] };
      if (record.msg !== message || !record.ts) continue;
      found.set(replica.name, {
        at: Date.parse(record.ts),
        ...(record.members ? { members: record.members } : {}),
      });
      break;
    }
  }
  return found;
}

/** When each replica's membership Lease was created (its acquire time), by replica name. */
async function leasesAcquiredAt(): Promise<Record<string, number>> {
  const list = (await custom.listNamespacedCustomObject({
    ...LEASES,
    namespace: "default",
    labelSelector: `${LABELS.shardRing}=${PROVIDER}`,
  })) as { items: Lease[] };
  return Object.fromEntries(
    list.items.map((lease) => [
      nameOfIdentity(lease.spec?.holderIdentity ?? ""),
      Date.parse(lease.spec?.acquireTime ?? ""),
    ]),
  );
}

describe("three sharded replicas started at once on 300 waiting Clusters", () => {
  it("join knowing each other, never work on one Cluster together nor hand one over, and make every Cluster Ready once", async () => {
    replicas.push(
      ...(await Promise.all(
        NAMES.map((name) =>
          startShardedReplica({
            name,
            kubeconfig: controlPlane.kubeconfigPath,
            folder,
            provider: PROVIDER,
            leaseMs: 15_000,
            renewDeadlineMs: 10_000,
            retryPeriodMs: RETRY_PERIOD_MS,
            logLevel: "info",
          }),
        ),
      )),
    );
    const [first] = replicas as [ShardedReplica];
    await eventually(
      async () =>
        expect(await metricOf(first, "openmcp_engine_objects", 'kind="Cluster",phase="Ready"')).toBe(
          CLUSTERS,
        ),
      { what: "every Cluster Ready", timeoutMs: 300_000, intervalMs: 1_000 },
    );
    for (const replica of replicas) expect(replica.exitedAt, `${replica.name} exited`).toBeUndefined();

    // Started together: their Leases were created within a retry period (else this machine could not
    // start three processes in 4 s, and what follows would not hold).
    const acquiredAt = Object.values(await leasesAcquiredAt());
    expect(acquiredAt).toHaveLength(NAMES.length);
    expect(Math.max(...acquiredAt) - Math.min(...acquiredAt)).toBeLessThan(RETRY_PERIOD_MS);
    // So each joined (found its own Lease in a list) knowing all three, and none worked alone first.
    const joined = logged("joined the shard ring");
    for (const name of NAMES)
      expect(joined.get(name)?.members?.map(nameOfIdentity), `${name} joined knowing`).toEqual(NAMES);

    const calls = readJournals(NAMES.map((name) => journalOf(folder, name)));
    expect(overlappingCalls(calls)).toEqual([]);
    // Each worked only on its own share, from its first call: no Cluster moved while the ring formed.
    expect(handovers(calls)).toEqual([]);
    for (const name of NAMES) {
      const ownCalls = calls.filter((call) => call.replica === name && call.cluster !== null);
      expect(ownCalls.length, `${name}'s calls about Clusters`).toBeGreaterThan(0);
      expect(Math.min(...ownCalls.map((call) => call.start))).toBeGreaterThanOrEqual(
        joined.get(name)?.at ?? 0,
      );
    }
    // For the README: how long a start took, from the Lease created to the first call about a Cluster.
    const leaseCreated = logged("created the membership lease; waiting to see the ring");
    console.info(
      NAMES.map((name) => {
        const from = leaseCreated.get(name)?.at ?? 0;
        const firstCall = Math.min(
          ...calls.filter((call) => call.replica === name && call.cluster !== null).map((call) => call.start),
        );
        return `${name}: joined after ${(joined.get(name)?.at ?? 0) - from} ms, first call after ${firstCall - from} ms`;
      }).join("; "),
    );
    const created = clustersCreated(folder);
    expect(created).toHaveLength(CLUSTERS);
    expect(new Set(created).size).toBe(CLUSTERS);
  }, 420_000);
});
