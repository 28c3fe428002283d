/**
 * The machine-wide locks of the test files: what two files (or more than a lock's slots) must never do side by side
 * on one machine. The sequencer (machine-lock-sequencer.ts) orders files so that holders of one lock do not wait on
 * each other; the locks themselves hold where its durations were wrong (a fresh machine, whose heavy files start when their assets are there).
 */
import { mkdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { acquireDirectoryLock, type ReleaseLock } from "../../src/util/directory-lock.ts";
import { machineCache } from "./machine-cache.ts";

/** The machine-wide locks and the test files that take each. */
export const MACHINE_LOCKS: Readonly<Record<string, readonly string[]>> = {
  // They start Cluster API's Docker provider, whose fixed ports allow one per machine: the CAPI stack takes this
  // lock itself (src/dev/capi-providers.ts).
  capd: ["capi-backend.heavy.test.ts", "capi-backend.conformance.heavy.test.ts"],
  // Several kind nodes booting or kept at once (or CAPD's Docker machines, which boot as kind nodes do): three
  // siblings of a landscape, a CAPD control plane with its worker, a pool's member beside a Cluster's own, the
  // conformance kit's lives. Two of them side by side have left kubeadm timing out on a new node, and a CAPD control
  // plane that never initialised (CI, 2026-11-29: capi-backend beside the kind conformance kit). Not the files whose
  // nodes boot one at a time (in-cluster, cli-up, capi-clusterctl, kind-clusters): a node that kubeadm gives up on
  // beside them is made again (createKindCluster and the kind backend both try again).
  "kind-nodes": [
    "capi-backend.heavy.test.ts",
    "kind-backend.conformance.heavy.test.ts",
    "kind-landscape.heavy.test.ts",
    "kind-pool.heavy.test.ts",
    "landscape-kind.heavy.test.ts",
    // Two kind clusters one after the other, each written to with a thousand objects: beside a pool's three nodes
    // (then booting at once) and the sharding file's replicas it hung (CI, 2026-11-28: load 28, its first cluster never written to).
    "kind-day-two.heavy.test.ts",
  ],
  // They keep Docker nodes running (kind nodes, CAPD's machines): each node is a whole Kubernetes control plane,
  // a few tenths of a core at rest and most of one while it boots. Four such files side by side (eight nodes) held
  // two cores at load 50, most of it the kernel switching threads; kubeadm gave up on new nodes, a 60 s test timed
  // out, and every file ran at half speed (run 17, 2026-11-29). Two at once (slots below), the others meanwhile.
  "docker-nodes": [
    "capi-backend.heavy.test.ts",
    "capi-clusterctl.heavy.test.ts",
    "cli-up.heavy.test.ts",
    "engine-image-docker.heavy.test.ts",
    "in-cluster.heavy.test.ts",
    "kind-backend.conformance.heavy.test.ts",
    "kind-clusters.heavy.test.ts",
    "kind-day-two.heavy.test.ts",
    "kind-landscape.heavy.test.ts",
    "kind-metallb.heavy.test.ts",
    "kind-pool.heavy.test.ts",
    "kind-restart.heavy.test.ts",
    "landscape-kind.heavy.test.ts",
  ],
};

/** How many files may hold each lock at once (1 unless named). */
export const LOCK_SLOTS: Readonly<Record<string, number>> = { "docker-nodes": 2 };

/** How many files may hold `lock` at once. */
export const slotsOf = (lock: string): number => LOCK_SLOTS[lock] ?? 1;

/**
 * The locks a test file's set-up takes for the whole file, in this order (every file takes them in one order, so
 * no two wait on each other); capd is taken by what it protects.
 */
const TAKEN_FOR_THE_FILE = ["kind-nodes", "docker-nodes"];

/** The locks `moduleId`'s file takes (none for most). */
export function locksOf(moduleId: string): string[] {
  return Object.entries(MACHINE_LOCKS)
    .filter(([, files]) => files.some((name) => moduleId.endsWith(`/${name}`)))
    .map(([lock]) => lock);
}

/**
 * Takes, waiting as long as `waitMs`, the locks `moduleId`'s file holds for its whole run; returns their release.
 * A lock of several slots is taken as any one of them. A holder killed is noticed by its pid at once.
 */
export async function holdFileLocks(moduleId: string, waitMs: number): Promise<ReleaseLock> {
  const released: ReleaseLock[] = [];
  const deadline = Date.now() + waitMs;
  const mine = locksOf(moduleId);
  const releaseAll = async () => {
    await Promise.all(released.map((done) => done()));
  };
  for (const lock of TAKEN_FOR_THE_FILE.filter((name) => mine.includes(name))) {
    const release = await takeSlot(lock, deadline);
    if (!release) {
      await releaseAll();
      throw heldTooLong(lock, waitMs);
    }
    released.push(release);
  }
  return releaseAll;
}

/**
 * Runs `work` holding the machine-wide lock `lock` (waiting up to `waitMs` for it): for a short part of a file that
 * must not run beside the same part of another file, such as booting a kind node (`kind-boot`).
 */
export async function withMachineLock<T>(lock: string, waitMs: number, work: () => Promise<T>): Promise<T> {
  const release = await takeSlot(lock, Date.now() + waitMs);
  if (!release) throw heldTooLong(lock, waitMs);
  try {
    return await work();
  } finally {
    await release();
  }
}

/** Why a lock could not be had: every slot of it held by another file for the whole wait. */
function heldTooLong(lock: string, waitMs: number): Error {
  const holders = slotsOf(lock) === 1 ? "another test file" : `${slotsOf(lock)} other test files`;
  return new Error(
    `the machine's ${lock} lock (${machineCache("locks", lock)}) was held by ${holders} for ${waitMs / 60_000} minutes`,
  );
}

/** One slot of `lock` (its folder itself when it has one), tried in turn until `deadline`. */
async function takeSlot(lock: string, deadline: number): Promise<ReleaseLock | undefined> {
  const slots = slotsOf(lock);
  const directories = Array.from({ length: slots }, (_, slot) =>
    slots === 1 ? machineCache("locks", lock) : machineCache("locks", lock, `slot-${slot}`),
  );
  for (const directory of directories) mkdirSync(directory, { recursive: true });
  for (;;) {
    for (const directory of directories) {
      const release = await acquireDirectoryLock(directory, { waitMs: 0, staleAfterMs: 24 * 3_600_000 });
      if (release) return release;
    }
    if (Date.now() >= deadline) return undefined;
    await sleep(500);
  }
}
