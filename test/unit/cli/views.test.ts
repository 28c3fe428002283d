/** The view flags of `run` and `up`: off unless asked, loopback by default, `0` turns a view off, bad addresses refused. */
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/usage-error.ts";
import {
  DEFAULT_INSPECT_ADDRESS,
  DEFAULT_LIVE_VIEW_ADDRESS,
  startViews,
  viewFlags,
} from "../../../src/cli/views.ts";
import { silentLogger } from "../../../src/runtime/logger.ts";

describe("view flags", () => {
  it("turns nothing on by default", () => {
    expect(viewFlags({}, "usage")).toEqual({ inspectAddress: undefined, liveViewAddress: undefined });
  });

  it("puts the inspector on loopback unless told otherwise; an address alone turns it on", () => {
    expect(viewFlags({ inspect: true }, "usage").inspectAddress).toBe(DEFAULT_INSPECT_ADDRESS);
    expect(DEFAULT_INSPECT_ADDRESS).toMatch(/^127\.0\.0\.1:/);
    expect(viewFlags({ "inspect-address": ":9000" }, "usage").inspectAddress).toBe(":9000");
    expect(() => viewFlags({ inspect: false, "inspect-address": ":9000" }, "usage")).toThrow(UsageError);
  });

  it("serves the live view only when given an address or a default (up), and 0 turns it off", () => {
    expect(viewFlags({ "live-view-address": "127.0.0.1:9100" }, "usage").liveViewAddress).toBe(
      "127.0.0.1:9100",
    );
    const up = { liveViewAddress: DEFAULT_LIVE_VIEW_ADDRESS };
    expect(viewFlags({}, "usage", up).liveViewAddress).toBe(DEFAULT_LIVE_VIEW_ADDRESS);
    expect(viewFlags({ "live-view-address": "0" }, "usage", up).liveViewAddress).toBeUndefined();
    expect(() => viewFlags({ "live-view-address": "localhost" }, "usage")).toThrow(/--live-view-address/);
  });

  it("starts nothing and observes nothing when both are off", async () => {
    const views = await startViews(
      { inspectAddress: undefined, liveViewAddress: undefined },
      { log: silentLogger },
    );
    expect(views.observers).toEqual([]);
    expect(views.liveViewUrl).toBeUndefined();
    expect(views.inspectorUrl).toBeUndefined();
    await views.close();
  });

  it("takes a free port for the live view when its port is taken, if allowed", async () => {
    const first = await startViews(
      { inspectAddress: undefined, liveViewAddress: "127.0.0.1:0" },
      { log: silentLogger },
    );
    const taken = `127.0.0.1:${new URL(first.liveViewUrl ?? "").port}`;
    await expect(
      startViews({ inspectAddress: undefined, liveViewAddress: taken }, { log: silentLogger }),
    ).rejects.toThrow(/EADDRINUSE/);
    const second = await startViews(
      { inspectAddress: undefined, liveViewAddress: taken },
      { log: silentLogger, anyPortIfTaken: true },
    );
    expect(second.liveViewUrl).not.toBe(first.liveViewUrl);
    await second.close();
    await first.close();
  });
});
