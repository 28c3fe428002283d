/**
 * A settings Rollout whose new settings a `local` Cluster fails with, then deleted: two `local` Clusters of a
 * ProviderConfig without settings; a Rollout brings `runtimeConfig` naming an API group no kube-apiserver serves
 * (well-formed, so the backend's checkSettings takes it, but kube-apiserver refuses to start with it). The canary's
 * kube-apiserver restarts with it and does not come back: the Cluster fails, the run halts at the canary, the other
 * Cluster is never asked. Deleting the Rollout gives the failed canary its config's settings back: its backend is
 * updated once more, its kube-apiserver starts without the flag, and the Cluster is Ready again, running the
 * config's settings (by hash) — not left failed for a person to re-create.
 */
import { request } from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import { settingsHash } from "../../src/machines/rollout/settings.ts";
import { localBackends, readyLocalClusters, startLocalWorld } from "../support/local-backend-state.ts";
import { isReady, type World } from "../support/world.ts";
import { createRollout, FAST_ROLLOUTS, rolloutWhere } from "../support/world-rollouts.ts";

const NAMES = ["c0", "c1"] as const;
/** Well-formed `--runtime-config`, but of a group kube-apiserver does not know: it exits at start. */
const UNKNOWN_GROUP = "nosuch.example.com/v1=true";
const locals = localBackends("local-settings-rollout-failed-");
let world: World;
let admins = new Map<string, KubeConfig>();

/** Whether Cluster `name`'s own API server answers /readyz with 200 (false: another status or no answer). */
async function answers(name: string): Promise<boolean> {
  const admin = admins.get(name) ?? new KubeConfig();
  const options: Parameters<typeof request>[1] = { method: "GET", timeout: 2_000 };
  await admin.applyToHTTPSOptions(options);
  const server = admin.getCurrentCluster()?.server ?? "";
  return new Promise((resolve) => {
    request(new URL("/readyz", server), options, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode === 200));
    })
      .on("error", () => resolve(false))
      .on("timeout", function (this: { destroy(): void }) {
        this.destroy();
      })
      .end();
  });
}

const updatesOf = (name: string) => world.callsAbout("update", `${world.namespace}/${name}`);

beforeAll(async () => {
  world = await startLocalWorld(locals, { engine: FAST_ROLLOUTS });
  admins = await readyLocalClusters(world, NAMES);
}, 240_000);

afterAll(() => locals.close(world), 120_000);

describe("a settings Rollout whose settings a local Cluster fails with", { timeout: 300_000 }, () => {
  it("halts at the canary, and once deleted gives the failed canary its config's settings back", async () => {
    const configHash = settingsHash(undefined);
    for (const name of NAMES) {
      expect(await answers(name), `${name} before the run`).toBe(true);
      expect((await world.readCluster(name))?.status?.providerStatus?.settingsHash).toBe(configHash);
    }
    await createRollout(world, "unknown-group", {
      settings: { providerConfig: "local", patch: { runtimeConfig: UNKNOWN_GROUP } },
      canary: 1,
      stages: [{ name: "rest", share: 100 }],
    });
    const halted = await rolloutWhere(
      world,
      "unknown-group",
      "the run halted at its canary",
      (r) => r.status?.phase === "Halted",
      90_000,
    );
    const ready = halted.status?.conditions?.find((c) => c.type === "Ready");
    console.log(`halted: ${ready?.reason}: ${ready?.message}`);
    expect(ready?.message).toContain("Cluster c0 failed");
    expect(halted.status?.targets?.map((t) => [t.name, t.progress])).toEqual([
      ["c0", "failed"],
      ["c1", "pending"],
    ]);
    expect(await answers("c0"), "the canary's kube-apiserver, with the unknown group").toBe(false);
    expect(updatesOf("c0")).toBe(1);
    expect(updatesOf("c1")).toBe(0);

    const started = Date.now();
    await world.remove(ROLLOUT_RESOURCE, "unknown-group");
    const back = (await world.waitFor(
      "c0",
      (cluster) =>
        isReady(cluster) &&
        cluster?.status?.providerStatus?.state === "ready" &&
        cluster.status.providerStatus.settingsHash === configHash,
      90_000,
    )) as Cluster;
    console.log(
      `deleting the halted run gave the failed c0 its config's settings back in ${((Date.now() - started) / 1_000).toFixed(1)} s`,
    );
    expect(back.status?.phase).toBe("Ready");
    expect(await answers("c0"), "the canary's kube-apiserver, on the config's settings").toBe(true);
    expect(updatesOf("c0"), "the run's update, then the give-back").toBe(2);
    expect(updatesOf("c1"), "never reached").toBe(0);
    expect(await answers("c1")).toBe(true);
  });
});
