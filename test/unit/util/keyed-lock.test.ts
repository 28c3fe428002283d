/** KeyedLock: one task at a time per key, in arrival order; keys do not wait for each other. */
import { describe, expect, it } from "vitest";
import { KeyedLock } from "../../../src/util/keyed-lock.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("KeyedLock", () => {
  it("runs the tasks of a key one after another, going on after one that failed", async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        order.push(`${name} start`);
        await tick();
        order.push(`${name} end`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([lock.run("a", task("1", true)), lock.run("a", task("2"))]);
    expect(order).toEqual(["1 start", "1 end", "2 start", "2 end"]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "fulfilled"]);
  });

  it("runs tasks of different keys at once", async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const task = (name: string) => async () => {
      order.push(`${name} start`);
      await tick();
      order.push(`${name} end`);
    };
    await Promise.all([lock.run("a", task("a")), lock.run("b", task("b"))]);
    expect(order.slice(0, 2)).toEqual(["a start", "b start"]);
  });
});
