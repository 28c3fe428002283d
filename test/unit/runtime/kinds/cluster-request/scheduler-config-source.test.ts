/** The file-based scheduler configuration: refused when invalid at start, reloaded on edits (also ConfigMap-volume symlink swaps), kept when an edit is invalid. */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SchedulerConfig } from "../../../../../src/api/scheduler-config.ts";
import type { EventRecord } from "../../../../../src/machines/shared/machine-step.ts";
import {
  fileConfigSource,
  type SchedulerConfigSource,
} from "../../../../../src/runtime/kinds/cluster-request/scheduler-config-source.ts";
import type { LogFields, Logger } from "../../../../../src/runtime/logger.ts";
import { writeFileAtomically } from "../../../../../src/util/atomic-file.ts";
import { mcpSchedulerConfig, mcpSchedulerConfigRead } from "../../../../fixtures/scheduler-config.ts";
import { eventually } from "../../../../support/eventually.ts";

/** A scheduler config whose only purpose `mcp` uses `profile`. */
const configWith = (profile: string) => `
managedControlPlane:
  mcpClusterPurpose: mcp${mcpSchedulerConfig(profile)}`;
const profileOf = (config: SchedulerConfig | undefined) => config?.purposeMappings.mcp?.template.spec.profile;

/** A Logger that keeps every record. */
class CapturingLogger implements Logger {
  readonly records: Array<{ level: string; message: string; fields: LogFields }> = [];
  debug = (message: string, fields: LogFields = {}) => this.#keep("debug", message, fields);
  info = (message: string, fields: LogFields = {}) => this.#keep("info", message, fields);
  warn = (message: string, fields: LogFields = {}) => this.#keep("warn", message, fields);
  error = (message: string, fields: LogFields = {}) => this.#keep("error", message, fields);
  with = () => this;
  #keep(level: string, message: string, fields: LogFields) {
    this.records.push({ level, message, fields });
  }
  warnings() {
    return this.records.filter((record) => record.level === "warn");
  }
}

let directory: string;
let log: CapturingLogger;
let told: EventRecord[];
let source: SchedulerConfigSource | undefined;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "scheduler-config-"));
  log = new CapturingLogger();
  told = [];
});

afterEach(async () => {
  source?.stop();
  source = undefined;
  await rm(directory, { recursive: true, force: true });
});

/** Writes `text` to `path` as editors and kubelet do: a whole new file renamed over the old one. */
const replaceFile = (path: string, text: string) => writeFileAtomically(path, text);

function sourceAt(path: string): SchedulerConfigSource {
  source = fileConfigSource({ path, log, tell: (event) => told.push(event) });
  return source;
}

/** The source of `path`, started, and the profiles of the configurations it told onChange about since. */
async function startedAt(path: string): Promise<{ live: SchedulerConfigSource; seen: string[] }> {
  const live = sourceAt(path);
  const seen: string[] = [];
  live.onChange((config) => seen.push(profileOf(config) ?? ""));
  await live.start();
  return { live, seen };
}

describe("fileConfigSource", () => {
  it("refuses to start on an invalid configuration, naming every problem", async () => {
    const path = join(directory, "config.yaml");
    await replaceFile(path, "scheduler:\n  scope: Everywhere\n  strategy: RoundRobin\n");
    const start = sourceAt(path).start();
    await expect(start).rejects.toThrow(/scheduler configuration is invalid/);
    await expect(start).rejects.toThrow(
      `${path}: scheduler.scope: "Everywhere" is not one of Cluster, Namespaced`,
    );
    await expect(start).rejects.toThrow(
      `${path}: scheduler.strategy: "RoundRobin" is not one of Balanced, BalancedIgnoreEmpty, Random, Simple`,
    );
    expect(source?.current()).toBeUndefined();
  });

  it("refuses to start when the file cannot be read", async () => {
    const path = join(directory, "missing.yaml");
    await expect(sourceAt(path).start()).rejects.toThrow(`scheduler configuration ${path} cannot be read`);
  });

  it("serves a valid configuration from the start, without calling onChange for it", async () => {
    const path = join(directory, "config.yaml");
    await replaceFile(path, configWith("a.b.c"));
    const { live, seen } = await startedAt(path);
    expect(live.current()).toEqual(mcpSchedulerConfigRead("a.b.c", "fleet"));
    expect(seen).toEqual([]);
    expect(log.records.map((record) => record.message)).toEqual(["scheduler configuration loaded"]);
  });

  it("reloads an edited valid configuration and tells onChange", async () => {
    const path = join(directory, "config.yaml");
    await replaceFile(path, configWith("a.b.c"));
    const { live, seen } = await startedAt(path);

    await replaceFile(path, configWith("x.y.z"));
    await eventually(() => expect(profileOf(live.current())).toBe("x.y.z"), { timeoutMs: 15_000 });
    expect(seen).toEqual(["x.y.z"]);
    expect(told).toContainEqual(expect.objectContaining({ type: "Normal", reason: "SchedulerConfigLoaded" }));
  });

  it("keeps the configuration in force when an edit is invalid, warns, and takes the next valid one", async () => {
    const path = join(directory, "config.yaml");
    await replaceFile(path, configWith("a.b.c"));
    const { live, seen } = await startedAt(path);

    await replaceFile(path, "scheduler:\n  scope: Everywhere\n");
    const [warning] = await eventually(() => log.warnings().length > 0 && log.warnings(), {
      what: "a warning about the invalid configuration",
      timeoutMs: 15_000,
    });
    expect(warning?.message).toBe("scheduler configuration not reloaded; the previous one stays in force");
    expect(String(warning?.fields.problem)).toContain('scheduler.scope: "Everywhere" is not one of');
    expect(told).toContainEqual(
      expect.objectContaining({ type: "Warning", reason: "InvalidSchedulerConfig" }),
    );
    expect(profileOf(live.current())).toBe("a.b.c");
    expect(seen).toEqual([]);

    await replaceFile(path, configWith("x.y.z"));
    await eventually(() => expect(profileOf(live.current())).toBe("x.y.z"), { timeoutMs: 15_000 });
    expect(seen).toEqual(["x.y.z"]);
  });

  it("picks up a ConfigMap volume's symlink swap (..data pointing to a new directory)", async () => {
    // What kubelet does: config.yaml → ..data/config.yaml, ..data → ..<timestamp>; an update makes a new
    // timestamped directory and renames a fresh ..data link over the old one.
    const first = join(directory, "..2026_11_23_10_00_00.1");
    await mkdir(first);
    await writeFile(join(first, "config.yaml"), configWith("a.b.c"));
    await symlink("..2026_11_23_10_00_00.1", join(directory, "..data"));
    await symlink(join("..data", "config.yaml"), join(directory, "config.yaml"));
    const { live, seen } = await startedAt(join(directory, "config.yaml"));
    expect(profileOf(live.current())).toBe("a.b.c");

    const second = join(directory, "..2026_11_23_10_05_00.2");
    await mkdir(second);
    await writeFile(join(second, "config.yaml"), configWith("x.y.z"));
    await symlink("..2026_11_23_10_05_00.2", join(directory, "..data_tmp"));
    await rename(join(directory, "..data_tmp"), join(directory, "..data"));
    await rm(first, { recursive: true });

    await eventually(() => expect(profileOf(live.current())).toBe("x.y.z"), { timeoutMs: 15_000 });
    expect(seen).toEqual(["x.y.z"]);
  });
});
