/**
 * The machine-wide locks of the test files: what two files must never do side by side on one machine. The
 * sequencer (machine-lock-sequencer.ts) orders files so that holders of one lock do not meet; the locks themselves
 * hold where its durations were wrong (a fresh machine, whose heavy files start when their assets are there).
 */
import { mkdirSync } from "node:fs";
import { acquireDirectoryLock, type ReleaseLock } from "../../src/util/directory-lock.ts";
import { machineCache } from "./machine-cache.ts";

/** The machine-wide locks and the test files that take each. */
export const MACHINE_LOCKS: Readonly<Record<string, readonly string[]>> = {
  // They start Cluster API's Docker provider, whose fixed ports allow one per machine: the CAPI stack takes this
  // lock itself (src/dev/capi-providers.ts).
  capd: ["capi-backend.heavy.test.ts", "capi-backend.conformance.heavy.test.ts"],
  // Several kind nodes booting at once (or CAPD's Docker machines, which boot as kind nodes do): three siblings of
  // a landscape, a CAPD control plane with its worker. Two of them side by side have left kubeadm timing out on a
  // new node. Not the files whose nodes boot one at a time (in-cluster, cli-up, capi-clusterctl, kind-clusters,
  // kind-pool): a node that kubeadm gives up on beside them is made again (createKindCluster and
  // the kind backend both try again).
  "kind-nodes": [
    "capi-backend.heavy.test.ts",
    "kind-landscape.heavy.test.ts",
    "landscape-kind.heavy.test.ts",
    // Two kind clusters one after the other, each written to with a thousand objects: beside a pool's three nodes
    // (then booting at once) and the sharding file's replicas it hung (CI, 2026-11-28: load 28, its first cluster never written to).
    "kind-day-two.heavy.test.ts",
  ],
};

/** The locks a test file's set-up takes for the whole file; capd is taken by what it protects. */
const TAKEN_FOR_THE_FILE = ["kind-nodes"];

/** The locks `moduleId`'s file takes (none for most). */
export function locksOf(moduleId: string): string[] {
  return Object.entries(MACHINE_LOCKS)
    .filter(([, files]) => files.some((name) => moduleId.endsWith(`/${name}`)))
    .map(([lock]) => lock);
}

/**
 * Takes, waiting as long as `waitMs`, the locks `moduleId`'s file holds for its whole run; returns their release.
 * A holder killed is noticed by its pid at once.
 */
export async function holdFileLocks(moduleId: string, waitMs: number): Promise<ReleaseLock> {
  const released: ReleaseLock[] = [];
  for (const lock of locksOf(moduleId).filter((name) => TAKEN_FOR_THE_FILE.includes(name))) {
    const directory = machineCache("locks", lock);
    mkdirSync(directory, { recursive: true });
    const release = await acquireDirectoryLock(directory, { waitMs, staleAfterMs: 24 * 3_600_000 });
    if (!release) {
      await Promise.all(released.map((done) => done()));
      throw new Error(
        `the machine's ${lock} lock (${directory}/lock) was held by another test file for ${waitMs / 60_000} minutes`,
      );
    }
    released.push(release);
  }
  return async () => {
    await Promise.all(released.map((done) => done()));
  };
}
