/**
 * The shard ring's rules over random histories, as shard-ring.ts plays them: replicas start (several at
 * once), and each goes round: list the ring (the answer is the Leases as they were when the list began,
 * so it may miss a Lease created meanwhile), then write its Lease (the first write creates it; the server
 * holds the new value before the replica has its answer). Meanwhile replicas start and finish work on
 * keys, crash (their Lease expires later), are cut off from the API server (they stop starting work at
 * the renew deadline, and their Lease expires only after their work in flight has ended, as the timings
 * ensure), or leave gracefully. The API server is modelled as the set of membership Leases.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ownerOf } from "../../../src/runtime/sharding/rendezvous.ts";
import {
  mayAcknowledge,
  mayWork,
  notJoined,
  type ShardView,
} from "../../../src/runtime/sharding/shard-view.ts";

/** Few replicas and keys, so random histories often move one key between two replicas. */
const IDENTITIES = ["r0", "r1", "r2", "r3", "r4", "r5"];
const KEYS = Array.from({ length: 4 }, (_, i) => `ns/cluster-${i}`);

/** The Leases on the API server: identity → the members it acknowledged. */
type Leases = ReadonlyMap<string, readonly string[]>;

/** Where a replica is in its round: it lists, then renews, then lists again. */
type Round =
  | { readonly phase: "idle" | "listed" }
  /** A list under way: the server answered it as the Leases were when it began. */
  | { readonly phase: "listing"; readonly answer: Leases }
  /** A renewal under way: the server already holds `acknowledged`, the replica does not know yet. */
  | { readonly phase: "renewing"; readonly acknowledged: readonly string[] };

/** A replica process: its view, its round and its work in flight. */
interface Replica {
  view: ShardView;
  round: Round;
  readonly inFlight: Set<string>;
  /** `cut-off`: it cannot reach the API server; past its renew deadline, so its view is no longer healthy. */
  state: "running" | "cut-off" | "crashed" | "left";
  /** The members its view held when it created its Lease. */
  membersAtCreate?: readonly string[];
}

type Step =
  | {
      readonly kind: "start-process" | "list" | "renew" | "round" | "crash" | "cut-off" | "expire" | "leave";
      readonly replica: number;
    }
  | { readonly kind: "start" | "finish"; readonly replica: number; readonly key: number };

const replica = fc.nat(IDENTITIES.length - 1);
const key = fc.nat(KEYS.length - 1);
const on = <K extends Step["kind"]>(kind: K, weight: number) => ({
  weight,
  arbitrary: fc.record({ kind: fc.constant(kind), replica }),
});
const step = fc.oneof(
  on("start-process", 4),
  // One phase of a round (begin or end of a list or of a renewal), or the rest of a round.
  on("list", 4),
  on("renew", 4),
  on("round", 16),
  { weight: 12, arbitrary: fc.record({ kind: fc.constant("start" as const), replica, key }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("finish" as const), replica, key }) },
  on("crash", 1),
  on("cut-off", 1),
  on("expire", 2),
  on("leave", 3),
) as fc.Arbitrary<Step>;

/** Replicas started at once: the steps that start each of them, before anything else. */
const startedTogether = fc
  .uniqueArray(replica, { minLength: 2, maxLength: 3 })
  .map((indices) => indices.map((r): Step => ({ kind: "start-process", replica: r })));

/** Shorthand for the histories below: `[kind, replica]` or `[kind, replica, key]`. */
type Short = readonly [Step["kind"], number, number?];
const history = (together: readonly number[], steps: readonly Short[]): [Step[], Step[]] => [
  together.map((r) => ({ kind: "start-process", replica: r })),
  steps.map(([kind, r, k]) => ({ kind, replica: r, key: k ?? 0 }) as Step),
];

/**
 * Histories this property found when one of the rules was left out, played first on every run so each
 * rule stays needed even where random search finds its counterexample only rarely.
 */
const FOUND: [Step[], Step[]][] = [
  // Without `joined`: r0 and r5 each create a Lease from a list that missed the other's, both work.
  history(
    [1, 0],
    [
      ["list", 0],
      ["start-process", 5],
      ["round", 5],
      ["start", 5, 0],
      ["round", 0],
      ["start", 0, 0],
    ],
  ),
  // Without `healthy`: r1, cut off past its deadline and expired for the others, starts again.
  history(
    [0, 1],
    [
      ["round", 1],
      ["round", 1],
      ["cut-off", 1],
      ["expire", 1],
      ["round", 0],
      ["round", 0],
      ["start", 1, 0],
      ["start", 0, 0],
    ],
  ),
  // Without the owner among the members: r3 starts r0's key while the server already holds its new
  // acknowledgement of r0, which r0 has read.
  history(
    [3, 0],
    [
      ["round", 3],
      ["round", 0],
      ["list", 3],
      ["list", 3],
      ["renew", 3],
      ["round", 0],
      ["start", 3, 2],
      ["start", 0, 2],
    ],
  ),
  // Without the owner by the acknowledged view: r2 starts a key of r1, which left, before acknowledging
  // that (r2 still works a key leaving it); it then acknowledges r0 without waiting for that key.
  history(
    [3, 2],
    [
      ["start-process", 1],
      ["round", 2],
      ["round", 1],
      ["round", 2],
      ["start", 2, 1],
      ["start", 2, 3],
      ["round", 3],
      ["leave", 1],
      ["finish", 2, 0],
      ["round", 2],
      ["start", 2, 0],
      ["start-process", 0],
      ["leave", 3],
      ["round", 0],
      ["round", 2],
      ["round", 0],
      ["start", 0, 0],
    ],
  ),
  // Without every peer's acknowledgement: r1 joins and starts a key r2 works by a view without r1.
  history(
    [2, 0],
    [
      ["round", 2],
      ["round", 2],
      ["start-process", 1],
      ["start", 2, 0],
      ["round", 1],
      ["round", 1],
      ["start", 1, 0],
    ],
  ),
  // Acknowledging while work on a key leaving us is in flight: r0 then starts the key r1 still works.
  history(
    [0, 1],
    [
      ["round", 1],
      ["round", 1],
      ["start", 1, 0],
      ["round", 0],
      ["round", 1],
      ["round", 0],
      ["start", 0, 0],
    ],
  ),
];

/** What a history did, for the properties and for the counters that show what was generated. */
interface Played {
  /** Every moment two replicas worked on one key. */
  readonly violations: string[];
  /** Every move of a key that no membership change explains (see `play`). */
  readonly flaps: string[];
  /** The running replicas' views at the end. */
  readonly views: Map<string, ShardView>;
  /** Pairs of replicas that each created its Lease without having seen the other's (they joined together). */
  readonly joinedUnseen: number;
  /** Lists that ended after a Lease they did not show had been created (lagging lists). */
  readonly laggingLists: number;
  /** Moves of a key from one replica to another. */
  readonly moves: number;
  /** Starts refused only because the replica had not yet seen its own Lease in a list. */
  readonly heldBack: number;
}

/**
 * Plays a history. Besides two replicas working on one key at once, it checks that keys do not flap:
 * a key moves from one worker to another at most once per membership change (a Lease created or
 * removed), and never goes back to a replica that handed it on while the replica it went to is still in
 * the ring.
 */
function play(steps: readonly Step[]): Played {
  const leases = new Map<string, readonly string[]>();
  const replicas = new Map<string, Replica>();
  const violations: string[] = [];
  const flaps: string[] = [];
  /** Per key: the replica that last started work on it, how many times it moved, and who took it from whom. */
  const lastWorker = new Map<string, string>();
  const movesOf = new Map<string, number>();
  const handedTo = new Map<string, Map<string, string>>();
  let membershipChanges = 0;
  let laggingLists = 0;
  let moves = 0;
  let heldBack = 0;

  /** The next phase of a replica's round, if it is at `phase` (a step that does not fit is a no-op). */
  const advance = (self: string, r: Replica, phase: Round["phase"]): void => {
    const { round } = r;
    if (round.phase !== phase) return;
    switch (round.phase) {
      case "idle":
        r.round = { phase: "listing", answer: new Map(leases) };
        break;
      case "listing": {
        if ([...leases.keys()].some((identity) => !round.answer.has(identity))) laggingLists++;
        const peers = [...round.answer].filter(([identity]) => identity !== self);
        r.view = {
          ...r.view,
          // Joined once a list shows its own Lease (the ring also waits a retry period: no matter here).
          joined: round.answer.has(self),
          members: [self, ...peers.map(([identity]) => identity)].sort(),
          peers: new Map(peers),
        };
        r.round = { phase: "listed" };
        break;
      }
      case "listed": {
        const acknowledged = mayAcknowledge(r.view, r.inFlight) ? r.view.members : r.view.acknowledged;
        if (!leases.has(self)) {
          membershipChanges++;
          r.membersAtCreate = r.view.members;
        }
        leases.set(self, acknowledged);
        r.round = { phase: "renewing", acknowledged };
        break;
      }
      case "renewing":
        r.view = { ...r.view, healthy: true, acknowledged: round.acknowledged };
        r.round = { phase: "idle" };
        break;
    }
  };

  const start = (self: string, r: Replica, index: number, k: string): void => {
    if (!mayWork(r.view, k)) {
      if (mayWork({ ...r.view, joined: true }, k)) heldBack++;
      return;
    }
    r.inFlight.add(k);
    const previous = lastWorker.get(k);
    lastWorker.set(k, self);
    if (previous === undefined || previous === self) return;
    moves++;
    const count = (movesOf.get(k) ?? 0) + 1;
    movesOf.set(k, count);
    if (count > membershipChanges)
      flaps.push(`step ${index}: ${k} moved ${count} times with ${membershipChanges} membership changes`);
    const handed = handedTo.get(k) ?? new Map<string, string>();
    const successor = handed.get(self);
    if (successor !== undefined && leases.has(successor))
      flaps.push(
        `step ${index}: ${k} went back to ${self} while ${successor}, which took it, is in the ring`,
      );
    handed.set(previous, self);
    handedTo.set(k, handed);
  };

  for (const [index, s] of steps.entries()) {
    const self = IDENTITIES[s.replica] as string;
    const current = replicas.get(self);
    const running = current?.state === "running" ? current : undefined;
    /** Still a process that works: running, or cut off but finishing (and asking the gate). */
    const working = running ?? (current?.state === "cut-off" ? current : undefined);
    switch (s.kind) {
      case "start-process":
        // Identities are never reused (run adds a random suffix).
        if (!current)
          replicas.set(self, {
            view: notJoined(self),
            round: { phase: "idle" },
            inFlight: new Set(),
            state: "running",
          });
        break;
      case "list":
        if (running) advance(self, running, running.round.phase === "listing" ? "listing" : "idle");
        break;
      case "renew":
        if (running) advance(self, running, running.round.phase === "renewing" ? "renewing" : "listed");
        break;
      case "round": // the rest of a round, or a whole one
        if (running)
          for (const phase of ["idle", "listing", "listed", "renewing"] as const)
            advance(self, running, phase);
        break;
      case "start":
        if (working) start(self, working, index, KEYS[s.key] as string);
        break;
      case "finish": {
        // One of its keys in flight (the key number picks which), so finishes are never wasted.
        const inFlight = [...(working?.inFlight ?? [])].sort();
        if (inFlight.length > 0) working?.inFlight.delete(inFlight[s.key % inFlight.length] as string);
        break;
      }
      case "crash":
        if (working) {
          working.state = "crashed"; // a dead process works no more; its Lease stays until it expires
          working.inFlight.clear();
        }
        break;
      case "cut-off":
        // Its renewals fail until the renew deadline passes: from then on its view is not healthy.
        if (running) {
          running.state = "cut-off";
          running.view = { ...running.view, healthy: false };
        }
        break;
      case "expire":
        // The timings make a cut-off replica's work end before its Lease expires for the others.
        if (current?.state === "crashed" || (current?.state === "cut-off" && current.inFlight.size === 0))
          if (leases.delete(self)) membershipChanges++;
        break;
      case "leave":
        if (running) {
          running.inFlight.clear(); // it finishes its reconciles, then deletes its Lease
          running.state = "left";
          if (leases.delete(self)) membershipChanges++;
        }
        break;
    }
    const workers = new Map<string, string>();
    for (const [identity, r] of replicas) {
      for (const k of r.inFlight) {
        const other = workers.get(k);
        if (other) violations.push(`step ${index}: ${k} worked on by ${other} and ${identity}`);
        workers.set(k, identity);
      }
    }
  }
  let joinedUnseen = 0;
  for (const [a, ra] of replicas)
    for (const [b, rb] of replicas)
      if (a < b && ra.membersAtCreate?.includes(b) === false && rb.membersAtCreate?.includes(a) === false)
        joinedUnseen++;
  const views = new Map(
    [...replicas].filter(([, r]) => r.state === "running").map(([identity, r]) => [identity, r.view]),
  );
  return { violations, flaps, views, joinedUnseen, laggingLists, moves, heldBack };
}

/** Every running replica's round, `count` times: each lists (all lists begin before any ends), then renews. */
function rounds(count: number): Step[] {
  const steps: Step[] = [];
  for (let round = 0; round < count; round++) {
    for (const kind of ["list", "list", "renew", "renew"] as const)
      for (let r = 0; r < IDENTITIES.length; r++) steps.push({ kind, replica: r });
  }
  return steps;
}

describe("the shard ring's rules", () => {
  it("never let two replicas work on one key at once, nor a key flap, however the replicas start and lag", () => {
    const seen = { runs: 0, joinedUnseen: 0, laggingLists: 0, moves: 0, heldBack: 0 };
    fc.assert(
      fc.property(
        startedTogether,
        fc.array(step, { minLength: 1, maxLength: 300, size: "max" }),
        (together, steps) => {
          const played = play([...together, ...steps]);
          seen.runs++;
          if (played.joinedUnseen > 0) seen.joinedUnseen++;
          if (played.laggingLists > 0) seen.laggingLists++;
          if (played.moves > 0) seen.moves++;
          if (played.heldBack > 0) seen.heldBack++;
          expect(played.violations).toEqual([]);
          expect(played.flaps).toEqual([]);
        },
      ),
      { numRuns: 10_000, examples: FOUND },
    );
    // The histories that matter are generated: replicas that created their Leases without having seen
    // each other, lists that missed a Lease created meanwhile, starts refused only because the replica
    // had not yet seen its own Lease listed, and keys that moved.
    expect(seen.joinedUnseen / seen.runs).toBeGreaterThan(0.2);
    expect(seen.laggingLists / seen.runs).toBeGreaterThan(0.2);
    expect(seen.heldBack / seen.runs).toBeGreaterThan(0.2);
    expect(seen.moves / seen.runs).toBeGreaterThan(0.05);
  });

  it("give every key to exactly its owner once the live replicas have listed and acknowledged each other", () => {
    const seen = { runs: 0, shared: 0 };
    fc.assert(
      fc.property(
        startedTogether,
        fc.array(step, { minLength: 1, maxLength: 60, size: "max" }),
        fc.nat(IDENTITIES.length - 1),
        (together, steps, extra) => {
          // Whatever happened, one more replica starts (unless its identity was used).
          const started = [...together, ...steps, { kind: "start-process" as const, replica: extra }];
          // Lists and renewals under way end, and all work ends: acknowledging waits for work on keys that move.
          const finishes: Step[] = IDENTITIES.flatMap((_, r) => [
            { kind: "list" as const, replica: r },
            { kind: "renew" as const, replica: r },
            ...KEYS.map((__, k) => ({ kind: "finish" as const, replica: r, key: k })),
          ]);
          // Leases of crashed and cut-off replicas expire; then every running replica makes four rounds (the first may only end one under way).
          const expiries = IDENTITIES.map((_, r): Step => ({ kind: "expire", replica: r }));
          const { violations, flaps, views } = play([...started, ...finishes, ...expiries, ...rounds(4)]);
          seen.runs++;
          if (views.size > 1) seen.shared++;
          expect(violations).toEqual([]);
          expect(flaps).toEqual([]);
          for (const k of KEYS) {
            const workers = [...views].filter(([, view]) => mayWork(view, k)).map(([identity]) => identity);
            expect(workers).toEqual(views.size === 0 ? [] : [ownerOf(k, [...views.keys()])]);
          }
        },
      ),
      { numRuns: 1_000 },
    );
    // The keys are divided among several live replicas often, not only handed to a lone one.
    expect(seen.shared / seen.runs).toBeGreaterThan(0.5);
  });
});
