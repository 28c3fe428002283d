/**
 * Two providers on one management cluster (issue 26): engines `alpha` (simulated backend) and `beta`
 * (existing backend) on one real API server. Each ProviderConfig is written only by the provider it
 * belongs to, a stable world gets no write at all, and a forced fight over an object the engine owns is
 * noticed (metric, Warning Event) and held back, so the engine's writes stay bounded. Clusters of other
 * providers — openMCP's workspace Cluster (a profile nobody publishes) and one labelled for another
 * provider — get no write at all while their owner keeps them Ready (issue 33).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { LABELS, RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { ExistingBackend } from "../../src/providers/existing.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { type DispatchOptions, interceptRequests } from "../../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { DEFAULT_WRITE_LOOP_LIMITS } from "../../src/runtime/controllers/write-loop-guard.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";

/** One write an engine sent: `PATCH providerconfigs/x/status`, `POST clusterprofiles`, … */
interface SentWrite {
  readonly method: string;
  /** `<plural>/<name>` (and `/status` for the status subresource); `<plural>` for a create. */
  readonly object: string;
}

/** An engine of the test, with every write it sends to our API groups and its log lines. */
interface Provider {
  readonly name: string;
  readonly engine: Engine;
  readonly writes: SentWrite[];
  readonly logged: Array<Record<string, unknown>>;
}

const OUR_GROUPS = /^\/apis\/(clusters|engine)\.openmcp\.cloud\/v1alpha1\/(.+)$/;

/** What a request writes, from its path (a create names only the collection); undefined for reads and other groups. */
function sentWrite(options: DispatchOptions): SentWrite | undefined {
  const method = options.method.toUpperCase();
  const path = options.path.split("?")[0] ?? "";
  const match = OUR_GROUPS.exec(path);
  if (method === "GET" || !match) return undefined;
  const object = match[2] ?? "";
  return { method, object };
}

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const stateDir = mkdtempSync(join(tmpdir(), "provider-ownership-"));
const providers: Provider[] = [];

async function startProvider(name: string, backend: ClusterBackend): Promise<Provider> {
  // A KubeConfig of its own, as a separate process would have: its writes are recorded apart.
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(controlPlane.kubeconfigPath);
  const writes: SentWrite[] = [];
  interceptRequests(kubeConfig, (dispatch) => (options, handler) => {
    const write = sentWrite(options);
    if (write) writes.push(write);
    return dispatch(options, handler);
  });
  const logged: Array<Record<string, unknown>> = [];
  const engine = new Engine({
    kubeConfig,
    providerName: name,
    environment: "test",
    backend,
    log: createLogger({ level: "debug", write: (line) => logged.push(JSON.parse(line)) }),
  });
  await engine.start();
  const provider = { name, engine, writes, logged };
  providers.push(provider);
  return provider;
}

let alpha: Provider;
let beta: Provider;

/** The ProviderConfigs of the two providers, and who should serve each. */
const CONFIGS = [
  // Names alpha.
  aProviderConfig({
    name: "alpha-own",
    providerRef: { name: "alpha" },
    backend: "simulated",
    supportedVersions: [{ version: "1.33.3" }],
  }),
  // Names nobody, simulated backend: alpha's to claim (beta runs another backend).
  aProviderConfig({
    name: "free-simulated",
    backend: "simulated",
    supportedVersions: [{ version: "1.33.3" }],
  }),
  // Names nobody, existing backend: beta's to claim.
  aProviderConfig({ name: "free-existing", backend: "existing", supportedVersions: [{ version: "1.33.3" }] }),
  // Names beta but needs the simulated backend, which alpha runs: the reported fight. Beta says why it
  // cannot serve it; alpha, whose backend it is, must not touch it.
  aProviderConfig({ name: "beta-mismatch", providerRef: { name: "beta" }, backend: "simulated" }),
];
const OWNER: Record<string, string> = {
  "alpha-own": "alpha",
  "free-simulated": "alpha",
  "free-existing": "beta",
  "beta-mismatch": "beta",
};

/** The profiles that should exist: beta-mismatch makes none. */
const PROFILES = ["test.alpha.alpha-own", "test.alpha.free-simulated", "test.beta.free-existing"];

const readConfig = async (name: string) =>
  (await custom.getClusterCustomObject({ ...RESOURCES.ProviderConfig, name })) as ProviderConfig;
const readProfile = async (name: string) =>
  (await custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name })) as ClusterProfile;
const listProfiles = async () =>
  (
    (await custom.listClusterCustomObject({ ...RESOURCES.ClusterProfile })) as {
      items: ClusterProfile[];
    }
  ).items;

/** The Ready condition of a config as stored. */
const readyOf = (config: ProviderConfig) => config.status?.conditions?.find((c) => c.type === "Ready");

/** How many times `provider` logged a finished reconcile of config `name`. */
const reconcilesOf = (provider: Provider, name: string) =>
  provider.logged.filter((line) => line.msg === "ProviderConfig reconciled" && line.config === name).length;

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  alpha = await startProvider("alpha", new SimulatedBackend({ provisionDelayMs: 0 }));
  beta = await startProvider(
    "beta",
    new ExistingBackend({
      readSecret: async () => undefined,
      stateFile: join(stateDir, "existing.json"),
    }),
  );
  for (const body of CONFIGS) await custom.createClusterCustomObject({ ...RESOURCES.ProviderConfig, body });
});

afterAll(async () => {
  for (const provider of providers) await provider.engine.stop();
  await controlPlane?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("two providers on one management cluster", () => {
  it("each serve their own ProviderConfigs, claim free ones of their backend, and write nothing of the other's", async () => {
    // Positive signal first: every config served (or, beta-mismatch, refused) by its owner.
    for (const name of ["alpha-own", "free-simulated", "free-existing"]) {
      const owner = OWNER[name];
      const config = await eventually(
        async () => satisfying(await readConfig(name), (c) => readyOf(c)?.status === "True"),
        { what: `${name} Ready` },
      );
      expect(config.spec.providerRef).toEqual({ name: owner });
      expect(config.status?.profileName).toBe(`test.${owner}.${name}`);
      expect((await readProfile(`test.${owner}.${name}`)).spec.providerRef).toEqual({ name: owner });
    }
    const mismatch = await eventually(
      async () => satisfying(await readConfig("beta-mismatch"), (c) => readyOf(c) !== undefined),
      { what: "beta-mismatch's status" },
    );
    expect(readyOf(mismatch)).toMatchObject({ status: "False", reason: "ConfigurationProblem" });
    expect(readyOf(mismatch)?.message).toContain('backend "simulated" is not one this controller runs');

    // Who wrote what: each config and profile only by its owner.
    for (const provider of [alpha, beta]) {
      const configs = provider.writes.filter((w) => w.object.startsWith("providerconfigs/"));
      const profiles = provider.writes.filter((w) => w.object.startsWith("clusterprofiles"));
      expect(configs.length, `${provider.name}'s config writes`).toBeGreaterThan(0);
      expect(profiles.length, `${provider.name}'s profile writes`).toBeGreaterThan(0);
      for (const write of configs) {
        expect(OWNER[write.object.split("/")[1] ?? ""], `${write.method} ${write.object}`).toBe(
          provider.name,
        );
      }
      for (const write of profiles.filter((w) => w.method !== "POST")) {
        expect(write.object, `${write.method} by ${provider.name}`).toMatch(
          new RegExp(`^clusterprofiles/test\\.${provider.name}\\.`),
        );
      }
      // A create names no object in its path: each engine created exactly its own profiles (had one
      // created another's, that one's own create would have been one more, refused as a duplicate).
      const creates = provider.writes.filter((w) => w.method === "POST" && w.object === "clusterprofiles");
      expect(creates, `${provider.name}'s profile creates`).toHaveLength(
        PROFILES.filter((name) => name.startsWith(`test.${provider.name}.`)).length,
      );
    }
    const profileNames = (await listProfiles()).map((profile) => profile.metadata.name).sort();
    expect(profileNames).toEqual([
      "test.alpha.alpha-own",
      "test.alpha.free-simulated",
      "test.beta.free-existing",
    ]);
  });

  it("leave a stable world alone: after both looked at every config again, nothing was written", async () => {
    const before = new Map(
      CONFIGS.map((config) => {
        const name = config.metadata.name ?? "";
        return [name, { alpha: reconcilesOf(alpha, name), beta: reconcilesOf(beta, name) }];
      }),
    );
    const profilesBefore = await listProfiles();
    const sentBefore = { alpha: alpha.writes.length, beta: beta.writes.length };
    // A touch that changes nothing either engine cares about wakes both engines for every config.
    const touched = new Map<string, string | undefined>();
    for (const config of CONFIGS) {
      const name = config.metadata.name ?? "";
      const written = (await custom.patchClusterCustomObject({
        ...RESOURCES.ProviderConfig,
        name,
        body: [{ op: "add", path: "/metadata/annotations", value: { "example.com/touched": "yes" } }],
      })) as ProviderConfig;
      touched.set(name, written.metadata.resourceVersion);
    }

    await eventually(
      () => {
        for (const [name, counts] of before) {
          expect(reconcilesOf(alpha, name), `alpha's reconciles of ${name}`).toBeGreaterThan(counts.alpha);
          expect(reconcilesOf(beta, name), `beta's reconciles of ${name}`).toBeGreaterThan(counts.beta);
        }
      },
      { what: "both engines to reconcile every touched config" },
    );

    expect(alpha.writes.slice(sentBefore.alpha)).toEqual([]);
    expect(beta.writes.slice(sentBefore.beta)).toEqual([]);
    for (const [name, resourceVersion] of touched) {
      expect((await readConfig(name)).metadata.resourceVersion, name).toBe(resourceVersion);
    }
    const versions = (profiles: ClusterProfile[]) =>
      Object.fromEntries(profiles.map((p) => [p.metadata.name, p.metadata.resourceVersion]));
    expect(versions(await listProfiles())).toEqual(versions(profilesBefore));
  });

  it("notice a fight over a profile (metric and Warning Event) and hold their writes back, so they stay bounded", async () => {
    const profile = "test.alpha.alpha-own";
    const object = `clusterprofiles/${profile}`;
    const engineWrites = () => alpha.writes.filter((w) => w.object === object).length;
    const loops = async () =>
      (await alpha.engine.metrics.registry.getMetricsAsJSON())
        .find((metric) => metric.name === "openmcp_engine_write_loops_total")
        ?.values.find((value) => value.labels.resource === "clusterprofiles")?.value ?? 0;
    expect(await loops()).toBe(0);
    const writesBefore = engineWrites();
    const started = Date.now();

    // A second writer that empties the versions the engine publishes, as fast as it can, while the
    // engine puts them back: until the guard has noticed, then as long again.
    let flips = 0;
    const flip = () =>
      custom.patchClusterCustomObject({
        ...RESOURCES.ClusterProfile,
        name: profile,
        body: [{ op: "replace", path: "/spec/supportedVersions", value: [] }],
      });
    while ((await loops()) === 0 && Date.now() - started < 60_000) {
      await flip();
      flips++;
    }
    for (let i = 0; i < flips; i++) await flip();
    const elapsedMs = Date.now() - started;

    expect(await loops()).toBeGreaterThanOrEqual(1);
    const written = engineWrites() - writesBefore;
    // At most maxWrites per window before each hold, nothing while held (holds are at least holdMs).
    const { maxWrites, holdMs } = DEFAULT_WRITE_LOOP_LIMITS;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThanOrEqual(maxWrites * (1 + Math.floor(elapsedMs / holdMs)));
    expect(alpha.logged).toContainEqual(
      expect.objectContaining({ msg: "write loop: holding back writes of an object", object }),
    );

    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    const event = await eventually(async () => {
      const events = await core.listNamespacedEvent({ namespace: "default" });
      const found = events.items.find((e) => e.reason === "WriteLoop" && e.involvedObject.name === profile);
      return found ?? false;
    });
    expect(event).toMatchObject({
      type: "Warning",
      involvedObject: { kind: "ClusterProfile", apiVersion: "clusters.openmcp.cloud/v1alpha1" },
    });
    expect(event.involvedObject.uid).toBe((await readProfile(profile)).metadata.uid);
    expect(event.message).toContain("by provider alpha");

    // The fight over, the engine puts the versions back once the hold has passed.
    await eventually(
      async () => satisfying(await readProfile(profile), (p) => p.spec.supportedVersions.length === 1),
      { what: "the profile restored after the hold", timeoutMs: 60_000 },
    );
  });
});

describe("other providers' Clusters", () => {
  const namespace = "landscape";
  /** openMCP's workspace mode: a profile no ClusterProfile carries, a provider label, status kept by its owner. */
  const workspace = aCluster({
    name: "workspace",
    namespace,
    profile: "kcp-workspace",
    labels: { [LABELS.provider]: "openmcp-workspace-runtime" },
  });
  /** Our profile's shape, but labelled for another provider and its profile missing: not ours either. */
  const labelledForAnother = aCluster({
    name: "labelled-for-another",
    namespace,
    profile: "test.alpha.gone",
    labels: { [LABELS.provider]: "someone-else" },
  });
  /** Alpha's shape, no label, profile missing (a mistyped config name): alpha's to report on. */
  const alphasMissing = aCluster({ name: "alphas-missing", namespace, profile: "test.alpha.not-there" });

  const readCluster = async (name: string) =>
    (await custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, name })) as Cluster;
  /** What the owner writes, as openMCP's workspace runtime does: phase Ready and a condition of its own. */
  const ownerStatus = (round: number) => ({
    observedGeneration: 1,
    phase: "Ready",
    conditions: [
      {
        type: "WorkspaceReady",
        status: "True",
        reason: "Ready",
        message: `round ${round}`,
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      },
    ],
  });
  const writesTo = (provider: Provider, name: string) =>
    provider.writes.filter((w) => w.object.startsWith(`namespaces/${namespace}/clusters/${name}`));

  beforeAll(async () => {
    await controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    for (const body of [workspace, labelledForAnother, alphasMissing]) {
      await custom.createNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, body });
    }
  });

  it("get no write for a minute while their owner keeps them Ready; a missing profile of our shape is reported", async () => {
    // Positive signal first: alpha has looked at the Clusters (it reports its own missing profile).
    const reported = await eventually(
      async () =>
        satisfying(await readCluster("alphas-missing"), (c) =>
          (c.status?.conditions ?? []).some((condition) => condition.type === "ProfileResolved"),
        ),
      { what: "alpha to report alphas-missing's profile" },
    );
    expect(reported.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "ProfileResolved", status: "False", reason: "ProfileNotFound" }),
    );
    expect(writesTo(beta, "alphas-missing"), "beta's writes to alpha's Cluster").toEqual([]);

    // The owners keep writing Ready for a minute; every write wakes both engines.
    const foreign = ["workspace", "labelled-for-another"];
    const started = Date.now();
    let round = 0;
    while (Date.now() - started < 60_000) {
      round += 1;
      for (const name of foreign) {
        await custom.patchNamespacedCustomObjectStatus({
          ...RESOURCES.Cluster,
          namespace,
          name,
          body: [{ op: "replace", path: "/status", value: ownerStatus(round) }],
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    for (const name of foreign) {
      const cluster = await readCluster(name);
      expect(cluster.status?.phase, name).toBe("Ready");
      expect(
        cluster.status?.conditions?.map((c) => [c.type, c.message]),
        name,
      ).toEqual([["WorkspaceReady", `round ${round}`]]);
      expect(cluster.metadata.finalizers, name).toBeUndefined();
      expect(Object.keys(cluster.metadata.labels ?? {}), name).toEqual([LABELS.provider]);
      for (const provider of [alpha, beta]) {
        expect(writesTo(provider, name), `${provider.name}'s writes to ${name}`).toEqual([]);
      }
    }
    // No Event names them either.
    const events = await controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace });
    const about = events.items.map((event) => event.involvedObject.name);
    expect(about).not.toContain("workspace");
    expect(about).not.toContain("labelled-for-another");
    expect(round, "owner rounds").toBeGreaterThan(10);
  }, 120_000);
});
