/** Every combination of the facts that matter to the Cluster machine's guards, as `observed` events. */
import type { ClusterObservation } from "../../src/api/backend.ts";
import type { VersionResolution } from "../../src/machines/backend-cluster/kubernetes-version.ts";
import type { ClusterEvent, ClusterFacts } from "../../src/machines/cluster/machine.ts";

const versions: Array<[boolean, VersionResolution | undefined]> = [
  [false, undefined],
  [true, { kind: "accepted", version: "1.33.3", deprecated: false }],
  [true, { kind: "unsupported", message: "not offered" }],
  [true, { kind: "downgrade", version: "1.32.7", message: "runs 1.33.3" }],
];
const backends: ClusterObservation[] = [
  { exists: false },
  { exists: true, phase: "provisioning", version: "1.33.3" },
  { exists: true, phase: "ready", version: "1.33.3", endpoint: "https://a" },
  { exists: true, phase: "ready", version: "1.32.7", endpoint: "https://a" },
  { exists: true, phase: "updating", version: "1.33.3", endpoint: "https://a" },
  { exists: true, phase: "deleting", version: "1.33.3" },
  { exists: true, phase: "failed", version: "1.33.3", message: "quota" },
  // Failed with what its target no longer asks (e.g. settings taken back): an update may repair it.
  { exists: true, phase: "failed", version: "1.33.3", message: "bad flag", outOfDate: true },
];

/** Every combination of the facts that matter to the guards. */
export const observedEvents: ClusterEvent[] = [false, true].flatMap((deleting) =>
  [false, true].flatMap((hasFinalizer) =>
    [[], ["request.clusters.openmcp.cloud/x"]].flatMap((foreignFinalizers) =>
      versions.flatMap(([profileFound, version]) =>
        backends.map((backend) => {
          const facts: ClusterFacts = {
            deleting,
            hasFinalizer,
            foreignFinalizers,
            profileFound,
            version,
            backend,
          };
          return { type: "observed" as const, facts };
        }),
      ),
    ),
  ),
);

/** What a backend that offers hibernation reports on the way to sleep, asleep, and on the way back (contract 1.6). */
const sleepingBackends: ClusterObservation[] = [
  { exists: true, phase: "hibernating", version: "1.33.3", endpoint: "https://a" },
  { exists: true, phase: "hibernated", version: "1.33.3", endpoint: "https://a" },
  { exists: true, phase: "waking", version: "1.33.3", endpoint: "https://a" },
];

/** What a hibernate annotation may ask: asleep, awake, asleep of a backend that cannot, an invalid value. */
const hibernations: NonNullable<ClusterFacts["hibernation"]>[] = [
  { wanted: true, offered: true },
  { wanted: false, offered: true },
  { wanted: true, offered: false },
  { wanted: false, offered: true, invalid: "yes" },
];

/**
 * {@link observedEvents} (the facts every kind that holds a cluster shares), and those without foreign finalizers
 * once more with each of the Cluster's own facts: a hand-over Secret still there or gone, a pool member idle or
 * claimed; and a built Cluster's with each hibernate annotation, at every backend phase including sleep's.
 */
export const clusterObservedEvents: ClusterEvent[] = [
  ...observedEvents,
  ...observedEvents
    .filter(({ facts }) => facts.foreignFinalizers.length === 0)
    .flatMap(({ facts }) =>
      (
        [
          { handover: { secret: "a-handover", state: "ready" } },
          { handover: { secret: "a-handover", state: "gone" } },
          { poolMember: { pool: "warm", member: "pool-1", claimed: false } },
          { poolMember: { pool: "warm", member: "pool-1", claimed: true } },
        ] satisfies Partial<ClusterFacts>[]
      ).map((own) => ({ type: "observed" as const, facts: { ...facts, ...own } })),
    ),
  ...observedEvents
    .filter(
      ({ facts }) =>
        facts.foreignFinalizers.length === 0 && facts.hasFinalizer && facts.version?.kind === "accepted",
    )
    .flatMap(({ facts }) =>
      [facts.backend, ...(facts.backend.exists ? [] : sleepingBackends)].flatMap((backend) =>
        hibernations.map((hibernation) => ({
          type: "observed" as const,
          facts: { ...facts, backend, hibernation },
        })),
      ),
    ),
];
