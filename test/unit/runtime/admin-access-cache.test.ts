/** The engine-wide admin-access cache: once per rotation window per cluster, shared calls, forgetting. */
import { describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import type { AdminAccess, ClusterBackend } from "../../../src/api/backend-contract.ts";
import { AdminAccessCache } from "../../../src/runtime/admin-access-cache.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const target = (uid: string): ClusterTarget => ({
  uid,
  namespace: "team",
  name: uid,
  tenancy: "Shared",
  profile: "p",
  providerConfig: "c",
});

/** A backend that mints a new kubeconfig on every call (as Gardener does), counting the calls per uid. */
function mintingBackend(answer: (uid: string) => "access" | "none" | "fail" = () => "access") {
  const calls = new Map<string, number>();
  const backend = {
    name: "minting",
    async adminAccess(t: ClusterTarget): Promise<AdminAccess | undefined> {
      const n = (calls.get(t.uid) ?? 0) + 1;
      calls.set(t.uid, n);
      const what = answer(t.uid);
      if (what === "fail") throw new Error("garden unreachable");
      return what === "none" ? undefined : { kubeconfig: `credential ${t.uid} #${n}` };
    },
  } as unknown as ClusterBackend;
  return { backend, calls };
}

describe("AdminAccessCache", () => {
  it("asks the backend once per window per cluster, and again once the window has passed", async () => {
    const clock = new FakeClock(1_000);
    const { backend, calls } = mintingBackend();
    const cache = new AdminAccessCache({ backend, clock });
    for (let i = 0; i < 5; i++)
      expect((await cache.get(target("a"), 60_000))?.kubeconfig).toBe("credential a #1");
    expect((await cache.get(target("b"), 60_000))?.kubeconfig).toBe("credential b #1");
    clock.advance(59_999);
    expect((await cache.get(target("a"), 60_000))?.kubeconfig).toBe("credential a #1");
    clock.advance(1);
    expect((await cache.get(target("a"), 60_000))?.kubeconfig).toBe("credential a #2");
    // A caller with a shorter window (another kind's resyncMs) refreshes sooner; the entry serves both.
    clock.advance(10_000);
    expect((await cache.get(target("a"), 5_000))?.kubeconfig).toBe("credential a #3");
    expect((await cache.get(target("a"), 60_000))?.kubeconfig).toBe("credential a #3");
    expect(Object.fromEntries(calls)).toEqual({ a: 3, b: 1 });
  });

  it("shares one backend call among callers who ask while it is under way", async () => {
    const { backend, calls } = mintingBackend();
    const cache = new AdminAccessCache({ backend, clock: new FakeClock() });
    const answers = await Promise.all([1, 2, 3, 4].map(() => cache.get(target("a"), 60_000)));
    expect(new Set(answers.map((a) => a?.kubeconfig))).toEqual(new Set(["credential a #1"]));
    expect(calls.get("a")).toBe(1);
  });

  it("remembers no missing answer and no failure: the next caller asks again", async () => {
    let answer: "access" | "none" | "fail" = "none";
    const { backend, calls } = mintingBackend(() => answer);
    const cache = new AdminAccessCache({ backend, clock: new FakeClock() });
    expect(await cache.get(target("a"), 60_000)).toBeUndefined();
    answer = "fail";
    await expect(cache.get(target("a"), 60_000)).rejects.toThrow("garden unreachable");
    answer = "access";
    expect((await cache.get(target("a"), 60_000))?.kubeconfig).toBe("credential a #3");
    expect(cache.size).toBe(1);
    expect(calls.get("a")).toBe(3);
  });

  it("forgets a cluster (deleted, or its credential refused with 401), even while the backend is being asked", async () => {
    const { backend, calls } = mintingBackend();
    const cache = new AdminAccessCache({ backend, clock: new FakeClock() });
    await cache.get(target("a"), 60_000);
    cache.forget("a");
    expect(cache.size).toBe(0);
    expect((await cache.get(target("a"), 60_000))?.kubeconfig).toBe("credential a #2");
    const during = cache.get(target("b"), 60_000);
    cache.forget("b");
    expect((await during)?.kubeconfig).toBe("credential b #1");
    expect(cache.size).toBe(1); // only a: b's answer, asked before it was forgotten, was not kept
    expect(calls.get("a")).toBe(2);
  });
});
