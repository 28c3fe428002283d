/** Reading backend settings and options: failures name the ProviderConfig and what to write. */
import { describe, expect, it } from "vitest";
import { durationOption, settingsFailure, stringMap } from "../../../../src/providers/shared/settings.ts";

describe("stringMap", () => {
  const fail = settingsFailure("pc", "settings: { labels: { a: b } }");

  it("takes a map of strings, and nothing as empty", () => {
    expect(stringMap({ a: "b" }, "settings.labels", fail)).toEqual({ a: "b" });
    expect(stringMap(undefined, "settings.labels", fail)).toEqual({});
  });

  it("refuses anything else, naming the ProviderConfig, the field and what to write", () => {
    expect(() => stringMap({ a: 1 }, "settings.labels", fail)).toThrow(
      "ProviderConfig pc: settings.labels must map names to strings; write settings: { labels: { a: b } }",
    );
    expect(() => stringMap(["a"], "settings.labels", fail)).toThrow(/must map names to strings/);
  });
});

describe("durationOption", () => {
  const how = { backend: "demo", examples: "90s or 5m" };

  it("reads a duration, and nothing when the option is not given", () => {
    expect(durationOption({ wait: "90s" }, "wait", how)).toBe(90_000);
    expect(durationOption({}, "wait", how)).toBeUndefined();
    expect(durationOption({ wait: "0" }, "wait", how)).toBe(0);
  });

  it("refuses what is not a duration, and zero when it must be positive", () => {
    expect(() => durationOption({ wait: "soon" }, "wait", how)).toThrow(
      'demo backend: wait "soon" is not a duration like 90s or 5m',
    );
    expect(() => durationOption({ wait: "0" }, "wait", { ...how, positive: true })).toThrow(
      'demo backend: wait "0" is not a duration like 90s or 5m',
    );
  });
});
