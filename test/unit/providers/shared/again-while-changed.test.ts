/** A command that must succeed when it can reads and patches again while a controller's status writes refuse its guarded patch. */
import { describe, expect, it } from "vitest";
import { againWhileChanged, ChangedMeanwhileError } from "../../../../src/providers/shared/remote-object.ts";

describe("againWhileChanged", () => {
  it("writes again on a fresh read while the object changed meanwhile, and gives up after the attempts", async () => {
    let calls = 0;
    const twiceRefused = async () => {
      calls++;
      if (calls < 3) throw new ChangedMeanwhileError("CAPI Cluster ns/c changed meanwhile; trying again");
      return "patched";
    };
    expect(await againWhileChanged(twiceRefused)).toBe("patched");
    expect(calls).toBe(3);
    calls = 0;
    const alwaysRefused = async () => {
      calls++;
      throw new ChangedMeanwhileError("changed meanwhile");
    };
    await expect(againWhileChanged(alwaysRefused, 4)).rejects.toThrow("changed meanwhile");
    expect(calls).toBe(4);
  });

  it("passes any other error on at once", async () => {
    let calls = 0;
    const refused = async () => {
      calls++;
      throw new Error("Gardener refused it");
    };
    await expect(againWhileChanged(refused)).rejects.toThrow("Gardener refused it");
    expect(calls).toBe(1);
  });
});
