/**
 * The shard ring's rules over random histories: replicas join, list the ring at any moment (so each
 * works from a view that may be stale), acknowledge, start and finish work, crash, leave gracefully,
 * and crashed replicas' Leases expire. The API server is modelled as the set of membership Leases.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ownerOf } from "../../../src/runtime/sharding/rendezvous.ts";
import { mayAcknowledge, mayWork, type ShardView } from "../../../src/runtime/sharding/shard-view.ts";

/** Few replicas and keys, so random histories often move one key between two replicas. */
const IDENTITIES = ["r0", "r1", "r2", "r3"];
const KEYS = Array.from({ length: 6 }, (_, i) => `ns/cluster-${i}`);

/** A replica process: its view (from its last list) and its work in flight. */
interface Replica {
  view: ShardView;
  readonly inFlight: Set<string>;
  state: "running" | "crashed" | "left";
}

type Step =
  | {
      readonly kind: "join" | "list" | "acknowledge" | "crash" | "expire" | "leave";
      readonly replica: number;
    }
  | { readonly kind: "start" | "finish"; readonly replica: number; readonly key: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("join" as const), replica: fc.nat(3) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("list" as const), replica: fc.nat(3) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("acknowledge" as const), replica: fc.nat(3) }) },
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant("start" as const), replica: fc.nat(3), key: fc.nat(5) }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("finish" as const), replica: fc.nat(3), key: fc.nat(5) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("crash" as const), replica: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expire" as const), replica: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("leave" as const), replica: fc.nat(3) }) },
);

/** Plays a history; returns every moment two running replicas worked on one key, and the running replicas' views at the end. */
function play(steps: readonly Step[]): { violations: string[]; views: Map<string, ShardView> } {
  /** The Leases on the API server: identity → the members it acknowledged. */
  const leases = new Map<string, readonly string[]>();
  const replicas = new Map<string, Replica>();
  const violations: string[] = [];
  const listed = (self: string, view: ShardView): ShardView => {
    const peers = [...leases].filter(([identity]) => identity !== self);
    return {
      ...view,
      members: [self, ...peers.map(([identity]) => identity)].sort(),
      peers: new Map(peers),
    };
  };
  for (const [index, s] of steps.entries()) {
    const self = IDENTITIES[s.replica] as string;
    const replica = replicas.get(self);
    const running = replica?.state === "running" ? replica : undefined;
    switch (s.kind) {
      case "join": {
        if (replica) break; // identities are never reused (run adds a random suffix)
        const view = listed(self, { self, healthy: true, members: [], acknowledged: [], peers: new Map() });
        const joined = { ...view, acknowledged: view.members };
        leases.set(self, joined.acknowledged);
        replicas.set(self, { view: joined, inFlight: new Set(), state: "running" });
        break;
      }
      case "list":
        if (running) running.view = listed(self, running.view);
        break;
      case "acknowledge":
        if (running && mayAcknowledge(running.view, running.inFlight)) {
          running.view = { ...running.view, acknowledged: running.view.members };
          leases.set(self, running.view.acknowledged);
        }
        break;
      case "start": {
        const key = KEYS[s.key] as string;
        if (running && mayWork(running.view, key)) running.inFlight.add(key);
        break;
      }
      case "finish":
        running?.inFlight.delete(KEYS[s.key] as string);
        break;
      case "crash":
        if (running) {
          running.state = "crashed"; // a dead process works no more; its Lease stays until it expires
          running.inFlight.clear();
        }
        break;
      case "expire":
        if (replica?.state === "crashed") leases.delete(self);
        break;
      case "leave":
        if (running) {
          running.inFlight.clear(); // it finishes its reconciles, then deletes its Lease
          running.state = "left";
          leases.delete(self);
        }
        break;
    }
    const workers = new Map<string, string>();
    for (const [identity, r] of replicas) {
      if (r.state !== "running") continue;
      for (const key of r.inFlight) {
        const other = workers.get(key);
        if (other) violations.push(`step ${index}: ${key} worked on by ${other} and ${identity}`);
        workers.set(key, identity);
      }
    }
  }
  const views = new Map(
    [...replicas].filter(([, r]) => r.state === "running").map(([identity, r]) => [identity, r.view]),
  );
  return { violations, views };
}

describe("the shard ring's rules", () => {
  it("never let two replicas work on one key at once, however stale their views", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 120, size: "max" }), (steps) => {
        expect(play(steps).violations).toEqual([]);
      }),
      { numRuns: 10_000 },
    );
  });

  it("give every key to exactly its owner once the live replicas have listed and acknowledged each other", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60, size: "max" }), fc.nat(3), (steps, extra) => {
        // Whatever happened, one more replica joins (unless its identity was used).
        const joined = [...steps, { kind: "join" as const, replica: extra }];
        // Leases of crashed replicas expire; then every running replica lists and acknowledges twice.
        const settle: Step[] = IDENTITIES.map((_, r) => ({ kind: "expire" as const, replica: r }));
        for (let round = 0; round < 2; round++) {
          for (const kind of ["list", "acknowledge"] as const)
            for (let r = 0; r < IDENTITIES.length; r++) settle.push({ kind, replica: r });
        }
        // Finish everything first: acknowledging waits for work on keys that move away.
        const finishes: Step[] = IDENTITIES.flatMap((_, r) =>
          KEYS.map((__, key) => ({ kind: "finish" as const, replica: r, key })),
        );
        const history = [...joined, ...finishes, ...settle];
        const { violations, views } = play(history);
        expect(violations).toEqual([]);
        for (const key of KEYS) {
          const workers = [...views].filter(([, view]) => mayWork(view, key)).map(([identity]) => identity);
          expect(workers).toEqual(views.size === 0 ? [] : [ownerOf(key, [...views.keys()])]);
        }
      }),
      { numRuns: 500 },
    );
  });
});
