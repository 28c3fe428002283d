/** The simulated backend's state folder: a record per cluster, pruned once its deletion completes, shared by instances. */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import { SimulatedBackend } from "../../../src/providers/simulated.ts";
import { folderStore } from "../../../src/providers/simulated-store.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const target = (i: number): ClusterTarget => ({
  uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  namespace: "ns",
  name: `c${i}`,
  tenancy: "Shared",
  profile: "p",
  providerConfig: "sim",
});

describe("the simulated backend's state folder", () => {
  it("keeps one small record per cluster and prunes it once the deletion completed", async () => {
    const folder = mkdtempSync(join(tmpdir(), "simulated-"));
    folders.push(folder);
    const clock = new FakeClock();
    const backend = new SimulatedBackend({
      stateDirectory: folder,
      clock,
      provisionDelayMs: 10,
      deleteDelayMs: 10,
    });
    for (let i = 0; i < 3; i++) await backend.create(target(i), "1.34.2");
    expect(readdirSync(join(folder, "clusters")).sort()).toEqual(
      [0, 1, 2].map((i) => `${target(i).uid}.json`),
    );
    await backend.delete(target(1));
    clock.advance(20);
    expect(await backend.observe(target(1))).toEqual({ exists: false });
    expect(readdirSync(join(folder, "clusters"))).toHaveLength(2);
    expect(backend.createdTotal).toBe(3);
  });

  it("is shared by every instance on the folder: a second one sees the first one's changes at once", async () => {
    const folder = mkdtempSync(join(tmpdir(), "simulated-"));
    folders.push(folder);
    const clock = new FakeClock();
    const first = new SimulatedBackend({ stateDirectory: folder, clock, provisionDelayMs: 10 });
    const second = new SimulatedBackend({ stateDirectory: folder, clock, provisionDelayMs: 10 });
    await first.create(target(7), "1.34.2");
    await second.create(target(7), "1.34.2"); // idempotent across instances
    expect(await second.observe(target(7))).toMatchObject({ exists: true, phase: "provisioning" });
    expect(first.createdTotal).toBe(1);
    expect(second.createdTotal).toBe(1);
  });
  it("counts a create cut short by kill -9 before its record was put, then made again, once", async () => {
    const folder = mkdtempSync(join(tmpdir(), "simulated-"));
    folders.push(folder);
    folderStore(folder).recordCreate(target(3).uid); // the killed process got this far
    const next = new SimulatedBackend({
      stateDirectory: folder,
      clock: new FakeClock(),
      provisionDelayMs: 10,
    });
    expect(await next.observe(target(3))).toEqual({ exists: false });
    await next.create(target(3), "1.34.2");
    expect(await next.observe(target(3))).toMatchObject({ exists: true, phase: "provisioning" });
    expect(next.createdTotal).toBe(1);
  });
});
