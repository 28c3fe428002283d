/**
 * ProviderConfigs become ClusterProfiles named <environment>.<provider>.<config> (or spec.profileName), kept in
 * step, removed with them; a name another holds is left alone and the config says so.
 */

import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { PROVIDER_CONFIG_LABELS } from "../../src/api/constants/provider-config.ts";
import { ANNOTATIONS, LABELS, RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aCluster, aClusterProfile, aProviderConfig } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let engine: Engine;
/** The engine's log lines, parsed. */
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName: "sim",
    environment: "dev",
    backend: new SimulatedBackend(),
    log: createLogger({ level: "debug", write: (line) => logged.push(JSON.parse(line)) }),
  });
  await engine.start();
});

afterAll(async () => {
  await engine?.stop();
  await controlPlane?.stop();
});

const readProfile = (name: string) =>
  custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name }).then(
    (profile) => profile as ClusterProfile,
    () => undefined,
  );
const readConfig = (name: string) =>
  custom.getClusterCustomObject({ ...RESOURCES.ProviderConfig, name }) as Promise<ProviderConfig>;

function applyConfig(name: string, spec: ProviderConfig["spec"]) {
  return custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name, ...spec }),
  });
}

describe("the profile controller", () => {
  it("makes a ClusterProfile from a ProviderConfig and reports it in the config's status", async () => {
    await applyConfig("small", {
      backend: "simulated",
      supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7", deprecated: true }],
    });
    const profile = await eventually(async () =>
      satisfying(await readProfile("dev.sim.small"), (p) => p !== undefined),
    );
    expect(profile?.spec).toEqual({
      providerRef: { name: "sim" },
      providerConfigRef: { name: "small" },
      supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7", deprecated: true }],
    });
    expect(profile?.metadata.labels).toMatchObject({
      [LABELS.provider]: "sim",
      [PROVIDER_CONFIG_LABELS.providerConfig]: "small",
    });
    expect(profile?.metadata.annotations?.[ANNOTATIONS.traits]).toBeUndefined();
    const config = await eventually(async () =>
      satisfying(await readConfig("small"), (c) => c.status?.profileName === "dev.sim.small"),
    );
    // It named no provider and its backend is ours: the engine claimed it.
    expect(config.spec.providerRef).toEqual({ name: "sim" });
    expect(config.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: "Ready",
        status: "True",
        message: "ClusterProfile dev.sim.small offers 1.33.3, 1.32.7",
      }),
    );
  });

  it("updates the profile when the config's versions change, and restores it when someone edits it", async () => {
    await applyConfig("medium", { backend: "simulated", supportedVersions: [{ version: "1.33.3" }] });
    await eventually(async () => satisfying(await readProfile("dev.sim.medium"), (p) => p !== undefined));
    await custom.patchClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: "medium",
      body: [{ op: "add", path: "/spec/supportedVersions/-", value: { version: "1.34.2" } }],
    });
    await eventually(async () =>
      satisfying(await readProfile("dev.sim.medium"), (p) => p?.spec.supportedVersions.length === 2),
    );
    await custom.patchClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      name: "dev.sim.medium",
      body: [{ op: "replace", path: "/spec/supportedVersions", value: [] }],
    });
    const restored = await eventually(async () =>
      satisfying(await readProfile("dev.sim.medium"), (p) => p?.spec.supportedVersions.length === 2),
    );
    expect(restored?.spec.supportedVersions.map((v) => v.version)).toEqual(["1.33.3", "1.34.2"]);
  });

  it("deletes the profile when its config is deleted", async () => {
    await applyConfig("short-lived", { backend: "simulated" });
    await eventually(async () =>
      satisfying(await readProfile("dev.sim.short-lived"), (p) => p !== undefined),
    );
    await custom.deleteClusterCustomObject({ ...RESOURCES.ProviderConfig, name: "short-lived" });
    await eventually(async () =>
      satisfying(await readProfile("dev.sim.short-lived"), (p) => p === undefined),
    );
  });

  it("makes no profile for a config of ours that needs another backend and says why", async () => {
    await applyConfig("elsewhere", { backend: "kind", providerRef: { name: "sim" } });
    const config = await eventually(async () =>
      satisfying(await readConfig("elsewhere"), (c) => (c.status?.conditions ?? []).length > 0),
    );
    expect(config.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "Ready", status: "False", reason: "ConfigurationProblem" }),
    );
    expect(await readProfile("dev.sim.elsewhere")).toBeUndefined();
    // The PROFILE column names no profile that is not there.
    expect(config.status?.profileName).toBeUndefined();
  });

  it("publishes the backend's traits in the profile's traits annotation, follows a change of them and drops it without them", async () => {
    await applyConfig("traited", {
      backend: "simulated",
      traits: ["zone/eu", "cluster.openmcp.cloud/workerless"],
    });
    /** The profile once its traits annotation is `traits` (absent for undefined). */
    const profileWithTraits = (traits: string | undefined) =>
      eventually(async () =>
        satisfying(
          await readProfile("dev.sim.traited"),
          (p) => p !== undefined && p.metadata.annotations?.[ANNOTATIONS.traits] === traits,
        ),
      );
    const patchConfig = (operation: object) =>
      custom.patchClusterCustomObject({ ...RESOURCES.ProviderConfig, name: "traited", body: [operation] });
    await profileWithTraits("cluster.openmcp.cloud/workerless,zone/eu");
    await patchConfig({ op: "replace", path: "/spec/traits", value: ["zone/us"] });
    await profileWithTraits("zone/us");
    await custom.patchClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      name: "dev.sim.traited",
      body: [{ op: "add", path: "/metadata/annotations/example.com~1note", value: "not the engine's" }],
    });
    await patchConfig({ op: "remove", path: "/spec/traits" });
    const untraited = await profileWithTraits(undefined);
    expect(untraited?.metadata.annotations).toEqual({ "example.com/note": "not the engine's" });
  });

  it.each([
    {
      case: "names another provider (even with our backend)",
      spec: { backend: "simulated", providerRef: { name: "other" } },
    },
    { case: "names no provider and needs another backend", spec: { backend: "kind" } },
  ])("leaves a config that $case alone: no claim, no status, no profile", async ({ spec }) => {
    const name = `foreign-${spec.backend}`;
    const created = (await applyConfig(name, spec)) as ProviderConfig;
    await eventually(
      () =>
        expect(logged).toContainEqual(
          expect.objectContaining({ msg: "ProviderConfig reconciled", config: name, ownership: "foreign" }),
        ),
      { what: `the engine to have looked at ${name}` },
    );

    const config = await readConfig(name);
    expect(config.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(config.spec).toEqual(spec);
    expect(config.status).toBeUndefined();
    expect(await readProfile(`dev.sim.${name}`)).toBeUndefined();
  });
});

/** The Ready condition of config `name` once it says `reason`. */
const readyBecause = (name: string, reason: string) =>
  eventually(
    async () =>
      satisfying(await readConfig(name), (c) =>
        (c.status?.conditions ?? []).some(
          (condition) => condition.type === "Ready" && condition.reason === reason,
        ),
      ),
    { what: `ProviderConfig ${name} Ready with reason ${reason}` },
  ).then((config) => config.status?.conditions?.find((condition) => condition.type === "Ready"));

describe("a profile named by spec.profileName, as openMCP's own providers name theirs", () => {
  /** A config of ours on the simulated backend whose spec.profileName is `profileName`. */
  const applyNamingConfig = (name: string, profileName: string) =>
    applyConfig(name, { backend: "simulated", providerRef: { name: "sim" }, profileName });

  it("publishes ClusterProfile `kind` for a config whose profileName is kind", async () => {
    await applyNamingConfig("kind-first", "kind");
    const profile = await eventually(async () =>
      satisfying(await readProfile("kind"), (p) => p !== undefined),
    );
    expect(profile?.spec.providerRef).toEqual({ name: "sim" });
    expect(profile?.spec.providerConfigRef).toEqual({ name: "kind-first" });
    expect(profile?.metadata.labels).toMatchObject({
      [LABELS.provider]: "sim",
      [PROVIDER_CONFIG_LABELS.providerConfig]: "kind-first",
    });
    const ready = await readyBecause("kind-first", "Ready");
    expect(ready?.status).toBe("True");
    expect((await readConfig("kind-first")).status?.profileName).toBe("kind");
    expect(await readProfile("dev.sim.kind-first")).toBeUndefined();
  });

  it("tells a second config claiming kind that the first holds it, and leaves the profile as it is", async () => {
    const before = await readProfile("kind");
    await applyNamingConfig("kind-second", "kind");
    const taken = await readyBecause("kind-second", "ProfileNameTaken");
    expect(taken?.status).toBe("False");
    expect(taken?.message).toContain('ClusterProfile kind is held by ProviderConfig "kind-first"');
    expect(taken?.message).toContain('delete ProviderConfig "kind-first"');
    const after = await readProfile("kind");
    expect(after?.spec.providerConfigRef).toEqual({ name: "kind-first" });
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
  });

  it("hands the profile to the second config when the first is deleted, without a restart", async () => {
    await custom.deleteClusterCustomObject({ ...RESOURCES.ProviderConfig, name: "kind-first" });
    const handed = await eventually(
      async () =>
        satisfying(await readProfile("kind"), (p) => p?.spec.providerConfigRef.name === "kind-second"),
      { what: "profile kind made for kind-second" },
    );
    expect(handed?.metadata.labels).toMatchObject({ [PROVIDER_CONFIG_LABELS.providerConfig]: "kind-second" });
    expect((await readyBecause("kind-second", "Ready"))?.status).toBe("True");
  });

  it("leaves another provider's profile of the name alone and says so on the config", async () => {
    const theirs = (await custom.createClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      body: aClusterProfile({ name: "gardener", provider: "gardener-provider", config: "gardener" }),
    })) as ClusterProfile;
    await applyNamingConfig("wants-gardener", "gardener");
    const taken = await readyBecause("wants-gardener", "ProfileNameTaken");
    expect(taken?.status).toBe("False");
    expect(taken?.message).toContain('ClusterProfile gardener belongs to provider "gardener-provider"');
    const after = await readProfile("gardener");
    expect(after?.metadata.resourceVersion).toBe(theirs.metadata.resourceVersion);
    expect(after?.spec.providerRef).toEqual({ name: "gardener-provider" });
  });

  it("reports on a Cluster naming a profile a config of ours claims but has not published", async () => {
    const namespace = "claimed-profiles";
    await controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    // Ours, but its backend is not one this engine runs: no profile `unpublished` is made.
    await applyConfig("unpublished", {
      backend: "kind",
      providerRef: { name: "sim" },
      profileName: "unpublished",
    });
    await readyBecause("unpublished", "ConfigurationProblem");
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace,
      body: aCluster({ name: "waiting", namespace, profile: "unpublished" }),
    });
    const reported = await eventually(
      async () =>
        satisfying(
          (await custom.getNamespacedCustomObject({
            ...RESOURCES.Cluster,
            namespace,
            name: "waiting",
          })) as Cluster,
          (c) => (c.status?.conditions ?? []).some((condition) => condition.type === "ProfileResolved"),
        ),
      { what: "the engine to report the missing profile of Cluster waiting" },
    );
    // It names the object to fix, the ProviderConfig, and its problem; not the Cluster's spec.profile.
    const resolved = reported.status?.conditions?.find((condition) => condition.type === "ProfileResolved");
    expect(resolved).toMatchObject({ status: "False", reason: "ProviderConfigNotReady" });
    expect(resolved?.message).toMatch(
      /^ClusterProfile "unpublished" is not published: ProviderConfig "unpublished" is not Ready \(ConfigurationProblem: backend "kind" is not one this controller runs .*\); fix the ProviderConfig \(retrying\)$/,
    );
    // The config says it where people look: its status names no profile, an Event tells the problem.
    expect((await readConfig("unpublished")).status?.profileName).toBeUndefined();
    const events = await eventually(
      async () =>
        satisfying(
          (
            await controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({
              namespace: "default",
              fieldSelector: "involvedObject.kind=ProviderConfig,involvedObject.name=unpublished",
            })
          ).items,
          (items) => items.length > 0,
        ),
      { what: "an Event on ProviderConfig unpublished" },
    );
    expect(events.map(({ type, reason }) => ({ type, reason }))).toEqual([
      { type: "Warning", reason: "ConfigurationProblem" },
    ]);
    expect(events[0]?.message).toContain('backend "kind" is not one this controller runs');
  });
});
