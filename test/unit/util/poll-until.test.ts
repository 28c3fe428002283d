import { describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/util/poll-until.ts";

describe("pollUntil", () => {
  it("resolves with the value once done, telling each new reason once, and takes a thrown error as not yet", async () => {
    const answers = [
      () => Promise.reject(new Error("connection refused")),
      () => Promise.resolve({ done: false as const, why: "Provisioning" }),
      () => Promise.resolve({ done: false as const, why: "Provisioning" }),
      () => Promise.resolve({ done: true as const, value: 42 }),
    ];
    const reasons: string[] = [];
    let call = 0;
    const value = await pollUntil("the answer", () => (answers[call++] as () => never)(), {
      timeoutMs: 5_000,
      intervalMs: 1,
      onWhy: (why) => reasons.push(why),
    });
    expect(value).toBe(42);
    expect(reasons).toEqual(["connection refused", "Provisioning"]);
  });

  it("gives up after the timeout, naming what it waited for and the last reason", async () => {
    await expect(
      pollUntil("Cluster a/b Ready", async () => ({ done: false, why: "Provisioning: creating" }), {
        timeoutMs: 20,
        intervalMs: 5,
      }),
    ).rejects.toThrow("Cluster a/b Ready: not within 0 s; last: Provisioning: creating");
  });
});
