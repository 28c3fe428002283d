/** Rendezvous hashing: one owner per key whatever the order, minimal moves on join and leave, an even split. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ownerOf } from "../../../src/runtime/sharding/rendezvous.ts";

const identity = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}_[0-9a-f]{8}$/);
const members = fc.uniqueArray(identity, { minLength: 1, maxLength: 8 });
const keys = fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{1,12}\/[a-z0-9-]{1,20}$/), {
  minLength: 1,
  maxLength: 200,
  // Any number of keys up to 200: the default size keeps them near 10, and the keys a newcomer takes then came
  // to barely more than the 100 the joining property asks for (110 on the worst of 200 seeds).
  size: "max",
});

describe("ownerOf", () => {
  it("gives every key one of the members, the same whatever order they are listed in", () => {
    fc.assert(
      fc.property(members, keys, fc.infiniteStream(fc.nat()), (list, ks, seeds) => {
        const shuffled = [...list].sort(() => (seeds.next().value % 3) - 1);
        for (const key of ks) {
          const owner = ownerOf(key, list);
          expect(list).toContain(owner);
          expect(ownerOf(key, shuffled)).toBe(owner);
        }
      }),
    );
  });

  it("moves only the keys a joining member takes, and only the leaving member's keys", () => {
    const seen = { stayed: 0, moved: 0 };
    fc.assert(
      fc.property(members, identity, keys, (list, newcomer, ks) => {
        fc.pre(!list.includes(newcomer));
        const grown = [...list, newcomer];
        for (const key of ks) {
          const before = ownerOf(key, list);
          const after = ownerOf(key, grown);
          // Joining: a key stays or goes to the newcomer. Leaving again is the same move backwards.
          expect(after === before || after === newcomer).toBe(true);
          seen[after === before ? "stayed" : "moved"]++;
        }
      }),
    );
    // Both kinds of key are reached: ones the newcomer takes, ones that stay where they were.
    expect(seen.moved).toBeGreaterThan(100);
    expect(seen.stayed).toBeGreaterThan(100);
  });

  it("splits keys evenly: 3 replicas get 1/3 of 3,000 Cluster keys each, within 15 % (the proof on the API server allows 20 %)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(identity, { minLength: 3, maxLength: 3 }),
        fc.nat(1_000_000),
        (list, salt) => {
          const counts = new Map(list.map((member) => [member, 0]));
          for (let i = 0; i < 3_000; i++) {
            const owner = ownerOf(`team-${salt % 97}/cluster-${salt}-${i}`, list) as string;
            counts.set(owner, (counts.get(owner) ?? 0) + 1);
          }
          for (const count of counts.values()) expect(Math.abs(count - 1_000)).toBeLessThan(150);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("has no owner without members", () => {
    expect(ownerOf("ns/a", [])).toBeUndefined();
  });
});
