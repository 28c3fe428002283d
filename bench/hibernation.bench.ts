/**
 * Benchmark: what hibernation buys per backend, side by side with the baseline it replaces — a fresh create.
 * For each backend asked (`local`: real etcd, kube-apiserver and controller-manager processes; `kind`: real node
 * containers, through the project's container toolchain), it times, on one cluster, `runs` rounds of
 * hibernate → hibernated and wake → ready (observed as the engine observes, every 250 ms), and `runs` fresh
 * creates → ready (each deleted after; a create reported absent is ordered again, as the engine does, and its
 * time counts). Prints the median and spread of each and the ratio wake / create;
 * asserts nothing. (`gardener` and `capi` need their heavy worlds — Gardener's API server with the simulated
 * gardenlet, Cluster API's managers on Docker — and print their times in their heavy tests.)
 *
 * Usage: node bench/hibernation.bench.ts [--backends local,kind] [--runs 5]
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import type { ClusterObservation, ClusterTarget } from "../src/api/backend.ts";
import type { ClusterBackend } from "../src/api/backend-contract.ts";
import { kindBackendOptions } from "../src/cli/kind-toolchain.ts";
import { conformanceContext } from "../src/providers/conformance.ts";
import { loadBackendFactory } from "../src/providers/registry.ts";
import { aProviderConfig } from "../test/support/builders.ts";

const { values } = parseArgs({
  options: { backends: { type: "string", default: "local,kind" }, runs: { type: "string", default: "5" } },
});
const runs = Number(values.runs);
const backends = values.backends.split(",");

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const seconds = (xs: readonly number[]) =>
  `${(median(xs) / 1000).toFixed(1)} s (${(Math.min(...xs) / 1000).toFixed(1)}–${(Math.max(...xs) / 1000).toFixed(1)})`;

/**
 * Ms until the backend's observation of `target` satisfies `wanted` (the engine's poll, finer). `absent`, if given,
 * is ordered again while the cluster is reported absent, as the engine orders a create again (kind's create may
 * fail on a loaded machine, and its cluster is then absent).
 */
async function timeUntil(
  backend: ClusterBackend,
  target: ClusterTarget,
  what: string,
  wanted: (o: ClusterObservation) => boolean,
  started: number,
  absent?: () => Promise<void>,
): Promise<number> {
  const deadline = started + 600_000;
  while (performance.now() < deadline) {
    const observed = await backend.observe(target);
    if (wanted(observed)) return performance.now() - started;
    if (!observed.exists && absent) await absent();
    if (observed.exists && observed.phase === "failed")
      throw new Error(`${target.name}: failed while waiting to be ${what}: ${observed.message ?? ""}`);
    await sleep(250);
  }
  throw new Error(`${target.name}: not ${what} within 10 minutes`);
}

const isPhase = (phase: string) => (o: ClusterObservation) => o.exists && o.phase === phase;

function targetOf(backend: string, name: string): ClusterTarget {
  return {
    uid: randomUUID(),
    namespace: "bench",
    name,
    tenancy: "Exclusive",
    profile: backend,
    providerConfig: backend,
  };
}

interface Figures {
  create: number[];
  hibernate: number[];
  wake: number[];
}

async function measure(name: string): Promise<Figures> {
  const state = mkdtempSync(join(tmpdir(), `bench-hibernation-${name}-`));
  const options = name === "kind" ? kindBackendOptions({}, (message) => console.error(message)) : {};
  const backend = await (await loadBackendFactory(name))(conformanceContext(state, { options }));
  const config = aProviderConfig({ name, backend: name });
  const version = backend.supportedVersions(config)[0]?.version;
  if (!version) throw new Error(`the ${name} backend offers no version`);
  if (!backend.hibernate || !backend.wake) throw new Error(`the ${name} backend offers no hibernation`);
  const figures: Figures = { create: [], hibernate: [], wake: [] };
  try {
    for (let i = 0; i < runs; i++) {
      const fresh = targetOf(name, `fresh-${i}`);
      const started = performance.now();
      const create = () => backend.create(fresh, version);
      await create();
      figures.create.push(await timeUntil(backend, fresh, "ready", isPhase("ready"), started, create));
      await backend.delete(fresh);
      await timeUntil(backend, fresh, "gone", (o) => !o.exists, performance.now());
    }
    const sleeper = targetOf(name, "sleeper");
    const create = () => backend.create(sleeper, version);
    await create();
    await timeUntil(backend, sleeper, "ready", isPhase("ready"), performance.now(), create);
    for (let i = 0; i < runs; i++) {
      let started = performance.now();
      await backend.hibernate(sleeper);
      figures.hibernate.push(await timeUntil(backend, sleeper, "hibernated", isPhase("hibernated"), started));
      started = performance.now();
      await backend.wake(sleeper);
      figures.wake.push(await timeUntil(backend, sleeper, "ready", isPhase("ready"), started));
    }
    await backend.delete(sleeper);
    await timeUntil(backend, sleeper, "gone", (o) => !o.exists, performance.now());
  } finally {
    await backend.close?.();
    rmSync(state, { recursive: true, force: true });
  }
  return figures;
}

const results = new Map<string, Figures>();
for (const name of backends) {
  console.error(`${name}: ${runs} fresh creates, then ${runs} sleeps and wakes of one cluster`);
  results.set(name, await measure(name));
}
console.log(`hibernation per backend, ${runs} runs each (median, spread), ready as the backend observes it:`);
console.log(
  `${"backend".padEnd(10)}${"fresh create → ready".padEnd(26)}${"hibernate → hibernated".padEnd(26)}${"wake → ready".padEnd(26)}wake / create`,
);
for (const [name, f] of results)
  console.log(
    `${name.padEnd(10)}${seconds(f.create).padEnd(26)}${seconds(f.hibernate).padEnd(26)}${seconds(f.wake).padEnd(26)}${(median(f.wake) / median(f.create)).toFixed(2)}×`,
  );
