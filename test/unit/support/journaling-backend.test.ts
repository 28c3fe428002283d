/** The journaling backend: the simulated backend unchanged, each call journaled as it begins and as it ends. */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import type { BackendContext } from "../../../src/api/backend-contract.ts";
import { systemClock } from "../../../src/api/clock.ts";
import { silentLogger } from "../../../src/api/logger.ts";
import { checkBackendConformance } from "../../../src/providers/conformance.ts";
import { loadBackendFactory } from "../../../src/providers/registry.ts";
import { aProviderConfig } from "../../support/builders.ts";
import { type BackendCall, createBackend, readJournals } from "../../support/journaling-backend.ts";

const folder = mkdtempSync(join(tmpdir(), "journaling-backend-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let backends = 0;

/** A journaling backend on a fresh state folder, as replica `replica`, journaling to the returned file. */
async function aJournalingBackend(replica: string, options: Record<string, string> = {}) {
  const journal = join(folder, `journal-${++backends}`, `${replica}.jsonl`);
  const context: BackendContext = {
    stateDirectory: join(folder, `state-${backends}`),
    options: { journal, replica, delay: "0ms", ...options },
    log: silentLogger,
    clock: systemClock,
    readSecret: async () => undefined,
  };
  return { backend: await createBackend(context), journal };
}

const target: ClusterTarget = {
  uid: "6b1a6a0e-0000-4000-8000-000000000001",
  namespace: "tenant",
  name: "c",
  tenancy: "Shared",
  profile: "test.engine-test.sim",
  providerConfig: "sim",
};

describe("the journaling backend", () => {
  it("behaves as a backend should (the conformance kit)", async () => {
    await checkBackendConformance(createBackend, {
      numRuns: 15,
      readyTimeoutMs: 2_000,
      context: { options: { journal: join(folder, "conformance.jsonl"), replica: "kit", delay: "15ms" } },
    });
  }, 120_000);

  it("journals a call when it begins, so a kill during it leaves the start, and again when it ends", async () => {
    const { backend, journal } = await aJournalingBackend("r1");
    const creating = backend.create(target, "1.34.2");
    expect(readJournals([journal])).toEqual([
      {
        replica: "r1",
        pid: process.pid,
        method: "create",
        cluster: target.uid,
        clusterName: "tenant/c",
        start: expect.any(Number),
        startSeq: 1,
      },
    ]);
    await creating;
    const [created] = readJournals([journal]);
    expect(created).toMatchObject({
      method: "create",
      cluster: target.uid,
      ok: true,
      startSeq: 1,
      endSeq: 2,
    });
    expect(created?.end).toBeGreaterThanOrEqual(created?.start ?? Number.NaN);
  });

  it("journals a call that threw as not ok, with its message, and still throws", async () => {
    const { backend, journal } = await aJournalingBackend("r1", { failureRate: "1" });
    await expect(backend.create(target, "1.34.2")).rejects.toThrow(/simulated fault/);
    expect(readJournals([journal])).toEqual([
      expect.objectContaining({
        method: "create",
        ok: false,
        error: expect.stringContaining("simulated fault"),
      }),
    ]);
  });

  it("journals calls about no cluster with cluster null", async () => {
    const { backend, journal } = await aJournalingBackend("r1");
    backend.supportedVersions(aProviderConfig({ name: "sim" }));
    expect(readJournals([journal])).toEqual([
      expect.objectContaining({ method: "supportedVersions", cluster: null, ok: true }),
    ]);
  });

  it("passes every other option to the simulated backend", async () => {
    const { backend } = await aJournalingBackend("r1", { delay: "1h" });
    await backend.create(target, "1.34.2");
    expect(await backend.observe(target)).toMatchObject({ exists: true, phase: "provisioning" });
  });

  it("refuses to start without a journal or a replica name", async () => {
    const context = {
      stateDirectory: join(folder, "refused"),
      log: silentLogger,
      clock: systemClock,
      readSecret: async () => undefined,
    };
    const incomplete: Record<string, string>[] = [
      { replica: "r1" },
      { journal: join(folder, "refused.jsonl") },
    ];
    for (const options of incomplete) {
      await expect(Promise.resolve().then(() => createBackend({ ...context, options }))).rejects.toThrow(
        /--backend-option journal=<file> and --backend-option replica=<name>/,
      );
    }
  });

  it("loads by path, as --backend gives it", async () => {
    const root = join(import.meta.dirname, "..", "..", "..");
    expect(await loadBackendFactory("./test/support/journaling-backend.ts", root)).toBe(createBackend);
  });
});

describe("readJournals", () => {
  const line = (call: BackendCall) => `${JSON.stringify(call)}\n`;
  const began = (replica: string, pid: number, startSeq: number, start: number): BackendCall => ({
    replica,
    pid,
    method: "create",
    cluster: "a",
    start,
    startSeq,
  });

  it("merges the replicas' files in order of start, each call once with its end if it has one", () => {
    const r1 = join(folder, "r1.jsonl");
    const r2 = join(folder, "r2.jsonl");
    const ended = { ...began("r1", 7, 1, 100), end: 150, endSeq: 2, ok: true };
    writeFileSync(r1, line(began("r1", 7, 1, 100)) + line(ended));
    writeFileSync(r2, line(began("r2", 7, 1, 120))); // the same pid and line in another replica: another call
    expect(readJournals([r1, r2])).toEqual([ended, began("r2", 7, 1, 120)]);
  });

  it("leaves out a last line torn by a kill, and reads a missing file as no calls", () => {
    const torn = join(folder, "torn.jsonl");
    writeFileSync(torn, line(began("r1", 8, 1, 100)));
    appendFileSync(torn, line(began("r1", 8, 2, 200)).slice(0, 30));
    expect(readJournals([torn, join(folder, "never-started.jsonl")])).toEqual([began("r1", 8, 1, 100)]);
  });
});
