/** A 429 from the API server is waited out as it asks: a requeue after Retry-After, never a failure with backoff. */
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { throttledFor } from "../../../../src/runtime/api-server/throttling.ts";
import { KeyedController } from "../../../../src/runtime/controllers/keyed-controller.ts";
import { Outcome } from "../../../../src/runtime/controllers/outcome.ts";
import { expectOneMoreAt, FakeClock, settle } from "../../../support/fake-clock.ts";

const tooMany = (headers: Record<string, string>) =>
  new ApiException(429, "Too Many Requests", { kind: "Status", reason: "TooManyRequests" }, headers);

describe("throttledFor", () => {
  it("reads Retry-After (any case), defaults to a second, caps at a minute, and looks through causes", () => {
    expect(throttledFor(tooMany({ "Retry-After": "3" }))).toBe(3_000);
    expect(throttledFor(tooMany({ "retry-after": "0" }))).toBe(1_000);
    expect(throttledFor(tooMany({}))).toBe(1_000);
    expect(throttledFor(tooMany({ "retry-after": "3600" }))).toBe(60_000);
    expect(throttledFor(new Error("wrapped", { cause: tooMany({ "retry-after": "2" }) }))).toBe(2_000);
    expect(throttledFor(new ApiException(500, "boom", {}, {}))).toBeUndefined();
    expect(throttledFor(new Error("not an API error"))).toBeUndefined();
  });
});

class Scripted extends KeyedController {
  readonly attempts: number[] = [];
  readonly results: Array<() => Outcome> = [];
  watch(): void {}
  keys(): string[] {
    return [];
  }
  async reconcile(): Promise<Outcome> {
    this.attempts.push(this.clock.now());
    return (this.results.shift() ?? (() => Outcome.awaitChange()))();
  }
}

describe("a controller throttled by the API server", () => {
  it("looks again after Retry-After, without counting a failure", async () => {
    const clock = new FakeClock();
    const controller = new Scripted({ name: "scripted", clock });
    controller.results.push(() => {
      throw tooMany({ "retry-after": "5" });
    });
    controller.run();
    controller.queue.add("a");
    await settle();
    expect(controller.attempts).toEqual([clock.now()]);
    expect(controller.queue.failures("a")).toBe(0);
    await expectOneMoreAt(clock, 5_000, () => controller.attempts, 1);
    expect(controller.queue.failures("a")).toBe(0);
    await controller.stop();
  });
});
