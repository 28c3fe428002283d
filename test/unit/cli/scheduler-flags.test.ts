/** The scheduler's flags of `run`: on by default, off beside the openMCP operator, its configuration from a file or a ConfigMap. */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { engineFlags, parseEngineArgs, runUsage } from "../../../src/cli/run.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const flags = (...args: string[]) =>
  engineFlags(parseEngineArgs(["--provider-name=p", ...args], runUsage), runUsage, {}, {});

describe("scheduler flags", () => {
  it("schedule by default, without a configuration until one is given", () => {
    expect(flags()).toMatchObject({ schedule: true, schedulerConfig: undefined });
  });

  it("turn scheduling off with --no-schedule, as beside the openMCP operator", () => {
    expect(flags("--no-schedule").schedule).toBe(false);
  });

  it("take the configuration from a file (absolute path) or a ConfigMap <namespace>/<name>", () => {
    expect(flags("--scheduler-config=conf/scheduler.yaml").schedulerConfig).toEqual({
      file: resolve("conf/scheduler.yaml"),
    });
    expect(flags("--scheduler-config-map=engine/scheduler").schedulerConfig).toEqual({
      configMap: { namespace: "engine", name: "scheduler" },
    });
  });

  it("refuse a ConfigMap reference that is not <namespace>/<name>, and both sources at once", () => {
    expect(() => flags("--scheduler-config-map=scheduler")).toThrow(UsageError);
    expect(() => flags("--scheduler-config-map=a/b/c")).toThrow("must look like <namespace>/<name>");
    expect(() => flags("--scheduler-config=x", "--scheduler-config-map=a/b")).toThrow("not both");
  });
});
