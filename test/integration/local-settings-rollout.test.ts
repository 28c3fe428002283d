/**
 * A settings Rollout on real clusters: three `local` Clusters (each its own etcd and kube-apiserver) of a ProviderConfig
 * without settings; a Rollout brings `runtimeConfig: networking.k8s.io/v1beta1=true` in two stages (canary 1, then
 * the rest), each behind an approval. Each Cluster's kube-apiserver really restarts with the new flag only when its
 * stage comes — checked on the cluster: `networking.k8s.io/v1beta1` served or not — and at the end the ProviderConfig
 * holds the settings and no Cluster is updated twice. Bad input (a ProviderConfig that does not exist, a
 * runtimeConfig the backend refuses) holds a Rollout with the reason, nothing changed. Figures: time per stage.
 */
import { request } from "node:https";
import { KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVE_STAGE_ANNOTATION,
  ROLLOUT_RESOURCE,
  SETTINGS_FROM_ROLLOUT_ANNOTATION,
} from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import type { Rollout, RolloutSpec } from "../../src/api/rollout.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { localBackends, readyLocalClusters, startLocalWorld } from "../support/local-backend-state.ts";
import { isReady, type World } from "../support/world.ts";
import { createRollout, FAST_ROLLOUTS, rolloutWhere } from "../support/world-rollouts.ts";

const NAMES = ["c0", "c1", "c2"] as const;
const BETA = "networking.k8s.io/v1beta1=true";
const locals = localBackends("local-settings-rollout-");
let world: World;
let admins = new Map<string, KubeConfig>();

/** The HTTP status of GET `path` on Cluster `name`'s own API server, with its admin kubeconfig. */
async function statusOf(name: string, path: string): Promise<number> {
  const admin = admins.get(name) ?? new KubeConfig();
  const options: Parameters<typeof request>[1] = { method: "GET" };
  await admin.applyToHTTPSOptions(options);
  const server = admin.getCurrentCluster()?.server ?? "";
  return new Promise((resolve, reject) => {
    request(new URL(path, server), options, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    })
      .on("error", reject)
      .end();
  });
}

/** Whether Cluster `name`'s API server serves the beta group the new setting turns on (undefined: not answering). */
const servesBeta = (name: string) =>
  statusOf(name, "/apis/networking.k8s.io/v1beta1").then(
    (status) => status === 200,
    () => undefined,
  );

const patchRollout = (name: string, body: object) =>
  world.custom.patchNamespacedCustomObject(
    { ...ROLLOUT_RESOURCE, namespace: world.namespace, name, body },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );

const approve = (stage: string, name = "beta-on") =>
  patchRollout(name, { metadata: { annotations: { [APPROVE_STAGE_ANNOTATION]: stage } } });

/** Approves `stage` of beta-on and waits until the run `holds`: the run then, and the seconds that took. */
async function approvedStage(
  stage: string,
  what: string,
  holds: (rollout: Rollout) => boolean,
  timeoutMs?: number,
) {
  const started = Date.now();
  await approve(stage);
  const rollout = await rolloutWhere(world, "beta-on", what, holds, timeoutMs);
  return { rollout, seconds: (Date.now() - started) / 1_000 };
}

const updatesOf = (name: string) => world.callsAbout("update", `${world.namespace}/${name}`);

/** Waits until Cluster `name`'s API server serves the beta group (`on`) or not. */
const serving = (name: string, on: boolean) =>
  // An object, since `eventually` takes a bare `false` for "not yet".
  eventually(() => servesBeta(name).then((now) => satisfying({ now }, (v) => v.now === on)), {
    what: `${name} ${on ? "serving" : "not serving"} networking.k8s.io/v1beta1`,
    timeoutMs: 60_000,
  });

const config = async () =>
  (await world.custom.getClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    name: "local",
  })) as ProviderConfig;

beforeAll(async () => {
  world = await startLocalWorld(locals, { engine: FAST_ROLLOUTS });
  const started = Date.now();
  admins = await readyLocalClusters(world, NAMES);
  console.log(`3 local Clusters Ready in ${((Date.now() - started) / 1_000).toFixed(1)} s`);
}, 240_000);

afterAll(() => locals.close(world), 120_000);

describe("a settings Rollout over local Clusters", { timeout: 120_000 }, () => {
  it("is refused by the API server without a version or settings, and its settings cannot change", async () => {
    await expect(createRollout(world, "nothing", {} as RolloutSpec)).rejects.toThrow(
      /a Rollout brings a version, settings \(spec.settings\), or both/,
    );
    await createRollout(world, "fixed", {
      settings: { providerConfig: "local", patch: { runtimeConfig: BETA } },
      gates: { notBefore: "2099-01-01T00:00:00Z" },
    });
    await expect(
      patchRollout("fixed", { spec: { settings: { patch: { runtimeConfig: "api/beta=true" } } } }),
    ).rejects.toThrow(/spec.settings cannot change/);
    await world.remove(ROLLOUT_RESOURCE, "fixed");
  });

  it("holds a run whose ProviderConfig is missing or whose settings its backend refuses, changing nothing", async () => {
    await createRollout(world, "no-config", {
      settings: { providerConfig: "nowhere", patch: { runtimeConfig: BETA } },
    });
    await createRollout(world, "refused", {
      settings: { providerConfig: "local", patch: { runtimeConfig: "v1beta1 --insecure" } },
    });
    const missing = await rolloutWhere(world, "no-config", "no-config held", (r) =>
      Boolean(r.status?.conditions?.some((c) => c.reason === "ProviderConfigNotFound")),
    );
    const refused = await rolloutWhere(world, "refused", "refused held", (r) =>
      Boolean(r.status?.conditions?.some((c) => c.reason === "SettingsRefused")),
    );
    const ready = (r: Rollout) => r.status?.conditions?.find((c) => c.type === "Ready");
    console.log(`no-config: ${ready(missing)?.message}\nrefused: ${ready(refused)?.message}`);
    expect(ready(missing)?.message).toContain(
      "ProviderConfig nowhere (spec.settings.providerConfig) does not exist",
    );
    expect(ready(refused)?.message).toContain(
      `runtimeConfig "v1beta1 --insecure" must be kube-apiserver's --runtime-config`,
    );
    for (const r of [missing, refused]) {
      expect(r.status?.phase).toBe("Pending");
      expect(r.status?.targets).toBeUndefined();
    }
    for (const name of NAMES) {
      const cluster = await world.readCluster(name);
      expect(cluster?.metadata.annotations?.[SETTINGS_FROM_ROLLOUT_ANNOTATION]).toBeUndefined();
      expect(world.callsAbout("update", `${world.namespace}/${name}`)).toBe(0);
    }
    expect((await config()).spec.settings).toBeUndefined();
    await world.remove(ROLLOUT_RESOURCE, "no-config");
    await world.remove(ROLLOUT_RESOURCE, "refused");
  });

  it("restarts each Cluster's kube-apiserver with the new setting only when its stage comes, then gives the config the settings", async () => {
    for (const name of NAMES) expect(await servesBeta(name), `${name} before the run`).toBe(false);
    await createRollout(world, "beta-on", {
      settings: { providerConfig: "local", patch: { runtimeConfig: BETA } },
      canary: 1,
      maxUnavailable: 2,
      stages: [{ name: "rest", share: 100 }],
      gates: { approval: true },
    });
    const frozen = await rolloutWhere(
      world,
      "beta-on",
      "beta-on frozen",
      (r) => (r.status?.targets?.length ?? 0) === 3,
    );
    expect(frozen.status?.targets?.map((t) => [t.name, t.stage])).toEqual([
      ["c0", "canary"],
      ["c1", "rest"],
      ["c2", "rest"],
    ]);
    // Waiting for the canary's approval: nothing changed yet.
    for (const name of NAMES) expect(await servesBeta(name)).toBe(false);

    const { rollout: afterCanary, seconds: canarySeconds } = await approvedStage(
      "canary",
      "the canary done",
      (r) => r.status?.stages?.find((s) => s.name === "canary")?.done === 1,
    );
    expect(await eventually(() => servesBeta("c0").then((on) => satisfying(on, (v) => v === true)))).toBe(
      true,
    );
    // The rest keep the settings they have while the run waits for its approval.
    expect(await servesBeta("c1")).toBe(false);
    expect(await servesBeta("c2")).toBe(false);
    expect((await config()).spec.settings).toBeUndefined();
    const settings = afterCanary.status?.settings;
    expect(settings?.from).not.toBe(settings?.to);
    expect(afterCanary.status?.targets?.find((t) => t.name === "c0")?.settingsHash).toBe(settings?.to);
    expect(world.callsAbout("update", `${world.namespace}/c0`)).toBe(1);
    expect(world.callsAbout("update", `${world.namespace}/c1`)).toBe(0);

    const { rollout: done, seconds: restSeconds } = await approvedStage(
      "rest",
      "beta-on succeeded",
      (r) => r.status?.phase === "Succeeded",
      90_000,
    );
    for (const name of NAMES)
      expect(await eventually(() => servesBeta(name).then((on) => satisfying(on, (v) => v === true)))).toBe(
        true,
      );
    expect((await config()).spec.settings).toEqual({ runtimeConfig: BETA });
    expect(done.status?.settings?.appliedAt).toBeDefined();
    expect(done.status?.targets?.map((t) => [t.name, t.progress, t.settingsHash])).toEqual(
      NAMES.map((name) => [name, "done", settings?.to]),
    );
    // The config now holds what the Clusters run: each Cluster, looked at again, stays as it is.
    for (const name of NAMES) {
      await world.waitFor(
        name,
        (cluster) => cluster?.status?.providerStatus?.settingsHash === settings?.to,
        30_000,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (const name of NAMES) {
      expect(world.callsAbout("update", `${world.namespace}/${name}`), `updates of ${name}`).toBe(1);
      expect(await world.waitFor(name, isReady, 5_000)).toBeDefined();
    }
    console.log(
      `settings rollout over 3 local Clusters: canary (1 kube-apiserver restarted) ${canarySeconds.toFixed(1)} s, ` +
        `rest (2, maxUnavailable 2) ${restSeconds.toFixed(1)} s`,
    );
  });

  it("keeps a Cluster an aborted run changed on its settings, and gives it the config's back once the Rollout is deleted", async () => {
    const off = "networking.k8s.io/v1beta1=false";
    await createRollout(world, "beta-off", {
      settings: { providerConfig: "local", patch: { runtimeConfig: off } },
      canary: 1,
      stages: [{ name: "rest", share: 100 }],
      gates: { approval: true },
    });
    await approve("canary", "beta-off");
    await rolloutWhere(world, "beta-off", "its canary done", (r) => r.status?.stages?.[0]?.done === 1);
    await serving("c0", false);
    await patchRollout("beta-off", { spec: { abort: true } });
    await rolloutWhere(world, "beta-off", "beta-off aborted", (r) => r.status?.phase === "Aborted");
    expect(await servesBeta("c0"), "kept after the abort").toBe(false);
    expect(await servesBeta("c1")).toBe(true);
    expect(updatesOf("c0")).toBe(2);

    const started = Date.now();
    await world.remove(ROLLOUT_RESOURCE, "beta-off");
    await serving("c0", true);
    console.log(
      `deleting the aborted run gave c0 its config's settings back in ${((Date.now() - started) / 1_000).toFixed(1)} s`,
    );
    expect(updatesOf("c0")).toBe(3);
    expect(updatesOf("c1")).toBe(1);
    expect((await config()).spec.settings).toEqual({ runtimeConfig: BETA });
  });
});
