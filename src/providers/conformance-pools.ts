/**
 * The warm-pool part of the conformance kit (contract 1.5), for a backend that declares `pools`: one member's
 * life through restarts of the backend (a new instance on the same state folder, as after kill -9 of the
 * engine) at every step: made for no Cluster, listed, bound to a Cluster's uid (twice: idempotent), served under
 * that uid, never doubled by a create for that uid, deleted under it; an idle member deleted by its id. With
 * `emptyStateOnRestart`, each restart is on a new, empty state folder instead: for a backend that keeps its records
 * at the infrastructure (an engine Pod rescheduled without its volume finds everything again). With
 * `sleepingMembers` (a backend that also offers hibernate and wake, contract 1.6, for sleeping pools): an idle
 * member put to sleep by its id stays asleep across a restart, is bound asleep to a second Cluster, and is woken
 * under that Cluster's uid, serving it.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { BackendFactory, ClusterBackend, PoolSupport } from "../api/backend-contract.ts";
import { poolMemberTarget } from "../api/cluster-pool.ts";
import { conformanceConfig, conformanceContext, offeredVersions } from "./conformance.ts";
import { fail } from "./conformance-commands.ts";
import type { KitPartOptions } from "./conformance-options.ts";

/** How patient to be, what to give the factory, and what else to check. */
export interface PoolConformanceOptions extends KitPartOptions {
  /** Every restart on a new, empty state folder (default false: the same folder, as after kill -9). */
  readonly emptyStateOnRestart?: boolean;
  /** Check a sleeping pool's member too: hibernated by its id, bound asleep, woken under a Cluster's uid (default false). */
  readonly sleepingMembers?: boolean;
}

/** Checks the pool contract; throws a {@link ConformanceError} naming the rule broken. */
export async function checkPoolConformance(
  factory: BackendFactory,
  options: PoolConformanceOptions = {},
): Promise<void> {
  const stateDirectories = [await mkdtemp(join(tmpdir(), "pool-conformance-"))];
  const newBackend = () =>
    factory(conformanceContext(stateDirectories[stateDirectories.length - 1] as string, options.context));
  let backend: ClusterBackend = await newBackend();
  const config = conformanceConfig(backend, options);
  const settings = options.settings ?? config.spec.settings;
  // As the engine does on start: the config's offer is read (where a backend reads it) before pools are served.
  const versions = await offeredVersions(backend, config);
  const restart = async () => {
    await backend.close?.();
    if (options.emptyStateOnRestart)
      stateDirectories.push(await mkdtemp(join(tmpdir(), "pool-conformance-")));
    backend = await newBackend();
    await offeredVersions(backend, config);
  };
  const pools = (): PoolSupport =>
    backend.pools ?? fail("a backend declares pools", `${backend.name} has none`);
  const timeoutMs = options.readyTimeoutMs ?? 10_000;
  const call = randomBytes(4).toString("hex");
  const pool = `conformance-${call}`;
  const ids = [`pool-${call}a1`, `pool-${call}a2`];
  const version = versions[0]?.version ?? fail("a config yields versions", "none offered");
  const cluster: ClusterTarget = {
    uid: `${call}-0000-4000-8000-00000000c001`,
    namespace: "conformance",
    name: "bound",
    tenancy: "Exclusive",
    profile: "conformance",
    providerConfig: config.metadata.name ?? "conformance",
    ...(settings ? { settings } : {}),
  };
  const memberTarget = (id: string): ClusterTarget =>
    poolMemberTarget(id, { name: cluster.providerConfig, ...(settings ? { settings } : {}) });
  const until = async <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) fail(what, `still ${JSON.stringify(value)} after ${timeoutMs} ms`);
      await sleep(50);
    }
  };
  const ready = (observation: ClusterObservation | undefined) =>
    observation?.exists === true && observation.phase === "ready";
  const phaseOf = (observation: ClusterObservation | undefined) =>
    observation?.exists ? observation.phase : "absent";
  /** A sleeping pool's member: asleep by its id across a restart, bound asleep, woken under the Cluster's uid. */
  const checkSleepingMember = async (id: string, woken: ClusterTarget) => {
    const hibernate =
      backend.hibernate?.bind(backend) ??
      fail("a backend checked for sleeping members offers hibernate and wake", `${backend.name} does not`);
    await hibernate(memberTarget(id));
    await restart();
    await until(
      "an idle member put to sleep by its id is listed asleep",
      async () => phaseOf((await pools().listMembers(pool)).find((member) => member.id === id)?.observation),
      (phase) => phase === "hibernated",
    );
    await pools().bind(id, woken);
    if (phaseOf(await backend.observe(woken)) !== "hibernated")
      fail(
        "a member bound asleep is observed asleep under the Cluster's uid",
        phaseOf(await backend.observe(woken)),
      );
    await backend.wake?.(woken);
    await restart();
    await until("a member woken under the Cluster's uid serves it", () => backend.observe(woken), ready);
    await backend.delete(woken);
    await until(
      "the woken Cluster's deletion deletes its member",
      () => backend.observe(woken),
      (o) => !o.exists,
    );
  };
  try {
    for (const id of ids) await pools().createMember({ id, pool, version }, memberTarget(id));
    await restart();
    await until(
      "pool members are listed, and become ready",
      () => pools().listMembers(pool),
      (members) =>
        members.length === 2 &&
        members.every((member) => ready(member.observation) && member.boundTo === undefined),
    );
    if ((await backend.observe(cluster)).exists)
      fail("an unbound member serves no Cluster", "the Cluster's uid is observed before any bind");
    await pools().bind(ids[0] as string, cluster);
    await restart();
    await pools().bind(ids[0] as string, cluster); // again, after a restart: idempotent
    const served = await until(
      "a bound member is observed under the Cluster's uid",
      () => backend.observe(cluster),
      ready,
    );
    await backend.create(cluster, version); // the engine's step orders a create; it must make nothing
    await restart();
    const members = await pools().listMembers(pool);
    const bound = members.find((member) => member.id === ids[0]);
    if (bound?.boundTo !== cluster.uid)
      fail("a restarted backend finds the binding", JSON.stringify(members));
    if (!ready(await backend.observe(cluster)))
      fail("a restarted backend still serves the Cluster", JSON.stringify(served));
    if (options.sleepingMembers)
      await checkSleepingMember(ids[1] as string, {
        ...cluster,
        uid: `${call}-0000-4000-8000-00000000c002`,
        name: "woken",
      });
    await pools().deleteMember(ids[1] as string);
    await restart();
    await until(
      "a deleted idle member is gone, the bound one stays",
      () => pools().listMembers(pool),
      (listed) => listed.length === 1 && listed[0]?.id === ids[0],
    );
    await backend.delete(cluster);
    await restart();
    await until(
      "a bound Cluster's deletion deletes its member",
      () => backend.observe(cluster),
      (o) => !o.exists,
    );
    await until(
      "nothing of the pool is left",
      () => pools().listMembers(pool),
      (listed) => listed.length === 0,
    );
    if ((await backend.observe(memberTarget(ids[0] as string))).exists)
      fail("the member's cluster is gone", ids[0] as string);
  } finally {
    for (const id of ids) await backend.pools?.deleteMember(id).catch(() => {});
    await backend.close?.();
    for (const directory of stateDirectories) await rm(directory, { recursive: true, force: true });
  }
}
