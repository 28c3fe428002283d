/** An object's span ids come from its uid; a traceparent is read and written as W3C Trace Context says. */
import { describe, expect, it } from "vitest";
import {
  formatTraceparent,
  objectSpanIds,
  parseTraceparent,
} from "../../../../src/runtime/tracing/trace-ids.ts";

const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("trace ids", () => {
  it("reads a version-00 traceparent and writes it back sampled", () => {
    const ids = parseTraceparent(PARENT);
    expect(ids).toEqual({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" });
    expect(formatTraceparent(ids ?? { traceId: "", spanId: "" })).toBe(PARENT);
  });

  it("refuses what is not one: other versions, all-zero ids, uppercase, wrong lengths", () => {
    for (const bad of [
      undefined,
      "",
      "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      `00-${"0".repeat(32)}-b7ad6b7169203331-01`,
      `00-0af7651916cd43dd8448eb211c80319c-${"0".repeat(16)}-01`,
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
  });

  it("gives an object the same span on every replica and restart, in its parent's trace or one of its own", () => {
    const own = objectSpanIds("uid-1", undefined);
    expect(own).toEqual(objectSpanIds("uid-1", undefined));
    expect(own.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(own.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(objectSpanIds("uid-2", undefined).traceId).not.toBe(own.traceId);
    const child = objectSpanIds("uid-2", own);
    expect(child.traceId).toBe(own.traceId);
    expect(child.spanId).toBe(objectSpanIds("uid-2", undefined).spanId);
  });
});
