/** Own writes shadow a lagging cache until it catches up or the TTL passes; time is a fake clock. */
import { describe, expect, it } from "vitest";
import { objectKey } from "../../../../src/api/object-key.ts";
import { RecentWrites } from "../../../../src/runtime/controllers/recent-writes.ts";
import { FakeClock } from "../../../support/fake-clock.ts";

interface Thing {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string };
  readonly data: string;
}

const thing = (name: string, resourceVersion: string, data = `${name}@${resourceVersion}`): Thing => ({
  metadata: { name, namespace: "ns", resourceVersion },
  data,
});

const TTL_MS = 10_000;

/** A fresh RecentWrites on a fake clock, told first of `written` (each under its own key). */
function recentWrites(...written: readonly Thing[]) {
  const clock = new FakeClock(1_000_000);
  const writes = new RecentWrites<Thing>(clock, TTL_MS);
  for (const object of written) writes.wrote(objectKey(object), object);
  return { clock, writes };
}

describe("RecentWrites.get", () => {
  it.each<[string, Thing[], Thing]>([
    ["when nothing was written", [], thing("a", "5")],
    [
      "once it shows a newer resourceVersion (someone wrote after us), the write dropped",
      [thing("a", "6")],
      thing("a", "17"),
    ],
  ])("gives the cached copy %s, and nothing where the cache has none", (_, written, cached) => {
    const { writes } = recentWrites(...written);
    expect(writes.get("ns/a", cached)).toBe(cached);
    expect(writes.get("ns/a", undefined)).toBeUndefined();
  });

  it("gives the remembered write while the cache shows an older copy, or none yet", () => {
    const mine = thing("a", "6");
    const { writes } = recentWrites(mine);
    expect(writes.get("ns/a", thing("a", "5"))).toBe(mine);
    expect(writes.get("ns/a", undefined)).toBe(mine);
    expect(writes.get("ns/b", thing("b", "1"))).toEqual(thing("b", "1"));
  });

  it("drops the write once the cache shows the same resourceVersion", () => {
    const { writes } = recentWrites(thing("a", "6", "mine"));
    const caughtUp = thing("a", "6", "from the watch");
    expect(writes.get("ns/a", caughtUp)).toBe(caughtUp);
    // Forgotten: an older copy (a stale re-list) is no longer shadowed.
    const older = thing("a", "5");
    expect(writes.get("ns/a", older)).toBe(older);
  });

  it("compares versions as numbers, not as text", () => {
    const mine = thing("a", "10");
    const { writes } = recentWrites(mine);
    expect(writes.get("ns/a", thing("a", "9"))).toBe(mine); // "9" > "10" as text
    const newer = thing("a", "11");
    expect(writes.get("ns/a", newer)).toBe(newer);
  });

  it("counts only equality for versions that are not integers", () => {
    const mine = thing("a", "v2");
    const { writes } = recentWrites(mine);
    expect(writes.get("ns/a", thing("a", "v3"))).toBe(mine);
    const same = thing("a", "v2", "cached");
    expect(writes.get("ns/a", same)).toBe(same);
  });

  it("shadows the cache for at most the TTL", () => {
    const mine = thing("a", "6");
    const { clock, writes } = recentWrites(mine);
    const stale = thing("a", "5");
    clock.advance(TTL_MS - 1);
    expect(writes.get("ns/a", stale)).toBe(mine);
    clock.advance(2);
    expect(writes.get("ns/a", stale)).toBe(stale);
    expect(writes.get("ns/a", undefined)).toBeUndefined();
  });

  it("takes a later write of the same key as the one to remember, with a fresh TTL", () => {
    const { clock, writes } = recentWrites(thing("a", "6"));
    clock.advance(TTL_MS - 1);
    const second = thing("a", "7");
    writes.wrote("ns/a", second);
    clock.advance(TTL_MS - 1);
    expect(writes.get("ns/a", thing("a", "6"))).toBe(second);
  });

  it("remembers a delete: the object is gone until the cache shows the deleted version or later", () => {
    const { writes } = recentWrites();
    writes.wrote("ns/a", undefined, "8");
    expect(writes.get("ns/a", thing("a", "7"))).toBeUndefined();
    const recreated = thing("a", "12");
    expect(writes.get("ns/a", recreated)).toBe(recreated);
  });

  it("defaults to a TTL of ten seconds", () => {
    const clock = new FakeClock(0);
    const writes = new RecentWrites<Thing>(clock);
    const mine = thing("a", "6");
    writes.wrote("ns/a", mine);
    clock.advance(9_000);
    expect(writes.get("ns/a", thing("a", "5"))).toBe(mine);
    clock.advance(2_000);
    expect(writes.get("ns/a", thing("a", "5"))).toEqual(thing("a", "5"));
  });
});

describe("RecentWrites.overlay", () => {
  it("is a copy of the cache when nothing was written", () => {
    const { writes } = recentWrites();
    const cached = [thing("a", "1"), thing("b", "1")];
    const result = writes.overlay(cached, objectKey);
    expect(result).toEqual(cached);
    expect(result).not.toBe(cached);
  });

  it("lays writes over the cache: newer copies replace, deleted ones go, new ones are added", () => {
    const { writes } = recentWrites();
    const updated = thing("a", "5");
    const created = thing("c", "6");
    writes.wrote("ns/a", updated);
    writes.wrote("ns/b", undefined, "4");
    writes.wrote("ns/c", created);
    writes.wrote("ns/d", undefined, "7"); // deleted before the cache ever saw it
    const untouched = thing("e", "1");
    expect(writes.overlay([thing("a", "1"), thing("b", "1"), untouched], objectKey)).toEqual([
      updated,
      untouched,
      created,
    ]);
  });

  it("shows the cache again once it caught up, and once the TTL passed", () => {
    const { clock, writes } = recentWrites(thing("a", "5", "mine"));
    writes.wrote("ns/c", thing("c", "6"));
    const caughtUp = [thing("a", "5", "watched"), thing("b", "1")];
    expect(writes.overlay(caughtUp, objectKey)).toEqual([...caughtUp, thing("c", "6")]);
    clock.advance(TTL_MS + 1);
    expect(writes.overlay(caughtUp, objectKey)).toEqual(caughtUp);
    // The deleted-then-expired entry does not come back either.
    writes.wrote("ns/b", undefined, "2");
    clock.advance(TTL_MS + 1);
    expect(writes.overlay(caughtUp, objectKey)).toEqual(caughtUp);
  });
});

describe("RecentWrites.takeEcho", () => {
  it("knows the echo of our last write once, and nothing else", () => {
    const { writes } = recentWrites(thing("a", "6"));
    expect(writes.takeEcho("ns/a", thing("a", "5"))).toBe(false); // an older event: not ours
    expect(writes.takeEcho("ns/b", thing("b", "6"))).toBe(false); // another object
    expect(writes.takeEcho("ns/a", thing("a", "6"))).toBe(true);
    expect(writes.takeEcho("ns/a", thing("a", "6"))).toBe(false); // a resync of it is news again
  });

  it("is not an echo once the TTL has passed", () => {
    const { clock, writes } = recentWrites(thing("a", "6"));
    clock.advance(TTL_MS + 1);
    expect(writes.takeEcho("ns/a", thing("a", "6"))).toBe(false);
  });
});
