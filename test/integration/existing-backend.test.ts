/** The existing backend binding Clusters to a real local control plane, reached through a kubeconfig in a fake Secret. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, VersionApi } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend, SecretReader } from "../../src/api/backend-contract.ts";
import type { JsonObject } from "../../src/api/common.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { createBackend, normaliseVersion } from "../../src/providers/existing.ts";
import { loadBackendFactory } from "../../src/providers/registry.ts";
import { freePorts } from "../../src/util/free-ports.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aClusterTarget, aProviderConfig } from "../support/builders.ts";

let controlPlane: ControlPlane;
/** The kubeconfig of the control plane, as a person would put it in a Secret. */
let kubeconfig: string;
/** Every base64 credential in that kubeconfig: none may ever show up in an error or observation. */
let credentials: string[];

beforeAll(async () => {
  controlPlane = await startControlPlane();
  kubeconfig = readFileSync(controlPlane.kubeconfigPath, "utf8");
  const parsed = parse(kubeconfig);
  credentials = [
    parsed.clusters[0].cluster["certificate-authority-data"],
    parsed.users[0].user["client-certificate-data"],
    parsed.users[0].user["client-key-data"],
  ];
  expect(credentials.every((value) => typeof value === "string" && value.length > 100)).toBe(true);
});
afterAll(async () => {
  await controlPlane?.stop();
});

/** The Secrets the fake reader serves, by `namespace/name/key`. */
let secrets: Map<string, string>;
let stateDirectory: string;
const readSecret: SecretReader = async (namespace, name, key) => secrets.get(`${namespace}/${name}/${key}`);
const settings: JsonObject = { kubeconfigSecretRef: { namespace: "clusters", name: "shared-dev" } };

beforeEach(() => {
  secrets = new Map([["clusters/shared-dev/kubeconfig", kubeconfig]]);
  stateDirectory = mkdtempSync(join(tmpdir(), "existing-backend-"));
});
afterEach(() => {
  rmSync(stateDirectory, { recursive: true, force: true });
});

function newBackend(options: Record<string, string> = {}, reader = readSecret): ClusterBackend {
  return createBackend(aBackendContext(stateDirectory, options, { readSecret: reader })) as ClusterBackend;
}

function target(overrides: Partial<ClusterTarget> = {}): ClusterTarget {
  return aClusterTarget({
    uid: "3d7c1f4e-2a6b-4c8d-9e0f-1a2b3c4d5e6f",
    name: "shared",
    tenancy: "Shared",
    profile: "default.engine.existing-dev",
    providerConfig: "existing-dev",
    settings,
    ...overrides,
  });
}

function config(spec: Partial<ProviderConfig["spec"]> = {}): ProviderConfig {
  return aProviderConfig({ name: "existing-dev", backend: "existing", ...spec });
}

/** The control plane's own version, as `GET /version` reports it, normalised. */
async function runningVersion(): Promise<string> {
  const info = await controlPlane.kubeConfig.makeApiClient(VersionApi).getCode();
  return normaliseVersion(info.gitVersion) ?? "";
}

/** The message of what `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a rejection");
}

function expectNoCredentials(text: string): void {
  for (const credential of credentials) {
    expect(text).not.toContain(credential.slice(0, 24));
    expect(text).not.toContain(credential.slice(-24));
  }
  expect(text).not.toMatch(/BEGIN|-data/);
}

describe("the existing backend", () => {
  it("is a built-in backend offering exactly the config's versions, the shared trait and admin access", async () => {
    expect(typeof (await loadBackendFactory("existing"))).toBe("function");
    const backend = newBackend();
    expect(backend.supportedVersions(config({ supportedVersions: [{ version: "1.33.3" }] }))).toEqual([
      { version: "1.33.3" },
    ]);
    expect(backend.supportedVersions(config())).toEqual([]);
    expect(backend.traits(config({ traits: ["eu", "shared"] }))).toEqual(["shared", "eu"]);
    expect(backend.capabilities).toEqual({ adminAccess: true, oidc: false });
    expect(normaliseVersion("v1.33.3+k3s1")).toBe("1.33.3");
    expect(normaliseVersion("v1.30.5-gke.1014001")).toBe("1.30.5");
    expect(() => newBackend({ probeTimeout: "later" })).toThrow(/probeTimeout "later" is not a duration/);
  });

  it("rejects an Exclusive Cluster: existing clusters are shared", async () => {
    const backend = newBackend();
    await expect(backend.create(target({ tenancy: "Exclusive" }), "1.36.3")).rejects.toThrow(
      "existing clusters are shared; set spec.tenancy: Shared (Cluster team-a/shared asks for Exclusive)",
    );
    expect(await backend.observe(target())).toEqual({ exists: false });
  });

  it("rejects missing or malformed settings with a message saying what to write", async () => {
    const backend = newBackend();
    const { settings: _, ...withoutSettings } = target();
    await expect(backend.create(withoutSettings, "1.36.3")).rejects.toThrow(
      /ProviderConfig existing-dev has no settings.kubeconfigSecretRef; set settings: \{ kubeconfigSecretRef: \{ namespace: <ns>, name: <secret>, key: kubeconfig \} \}/,
    );
    await expect(
      backend.create(target({ settings: { kubeconfigSecretRef: "shared-dev" } }), "1.36.3"),
    ).rejects.toThrow(/settings.kubeconfigSecretRef must be an object/);
    await expect(
      backend.create(target({ settings: { kubeconfigSecretRef: { namespace: "clusters" } } }), "1.36.3"),
    ).rejects.toThrow(/settings.kubeconfigSecretRef.name must be a non-empty string/);
    await expect(
      backend.create(
        target({ settings: { kubeconfigSecretRef: { namespace: "clusters", name: "x", key: 7 } } }),
        "1.36.3",
      ),
    ).rejects.toThrow(/settings.kubeconfigSecretRef.key must be a non-empty string/);
    expect(await backend.observe(target())).toEqual({ exists: false });
  });

  it("rejects a missing Secret or key, and a kubeconfig that does not parse, without quoting it", async () => {
    const backend = newBackend();
    const missing = await rejection(
      backend.create(
        target({ settings: { kubeconfigSecretRef: { namespace: "clusters", name: "nope" } } }),
        "1.36.3",
      ),
    );
    expect(missing).toBe(
      'Secret clusters/nope or its key "kubeconfig" does not exist (kubeconfigSecretRef of ProviderConfig existing-dev); create it with the existing cluster\'s kubeconfig',
    );
    const wrongKey = await rejection(
      backend.create(
        target({
          settings: { kubeconfigSecretRef: { namespace: "clusters", name: "shared-dev", key: "config" } },
        }),
        "1.36.3",
      ),
    );
    expect(wrongKey).toMatch(/^Secret clusters\/shared-dev or its key "config" does not exist/);

    // Broken YAML right after the key material, so a parser quoting its context would leak it.
    secrets.set("clusters/shared-dev/kubeconfig", `${kubeconfig}\n  bad: [unclosed\n: : :`);
    const unparsable = await rejection(backend.create(target(), "1.36.3"));
    expect(unparsable).toBe(
      'key "kubeconfig" of Secret clusters/shared-dev is not a kubeconfig (YAML that does not parse)',
    );
    expectNoCredentials(unparsable);

    const withoutContext = parse(kubeconfig);
    withoutContext["current-context"] = "elsewhere";
    secrets.set("clusters/shared-dev/kubeconfig", stringify(withoutContext));
    const noServer = await rejection(backend.create(target(), "1.36.3"));
    expect(noServer).toMatch(/has no current-context naming a cluster with a server/);
    expectNoCredentials(noServer);

    const failingReader: SecretReader = async () => {
      throw new Error('secrets "shared-dev" is forbidden: User "engine" cannot get resource "secrets"');
    };
    await expect(newBackend({}, failingReader).create(target(), "1.36.3")).rejects.toThrow(
      /^cannot read Secret clusters\/shared-dev \(kubeconfigSecretRef of ProviderConfig existing-dev\): secrets "shared-dev" is forbidden/,
    );
    expect(await backend.observe(target())).toEqual({ exists: false });
  });

  it("binds a Cluster: ready at the kubeconfig's server with the version the cluster runs", async () => {
    const backend = newBackend();
    const version = await runningVersion();
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(await backend.observe(target())).toEqual({ exists: false });
    await backend.create(target(), version);
    const observation = await backend.observe(target());
    expect(observation).toEqual({
      exists: true,
      phase: "ready",
      version,
      endpoint: controlPlane.server,
      info: `existing cluster at ${controlPlane.server}`,
    });
    expectNoCredentials(JSON.stringify(observation));
    const state = readFileSync(join(stateDirectory, "existing.json"), "utf8");
    expect(JSON.parse(state).bindings).toEqual([
      expect.objectContaining({
        uid: target().uid,
        providerConfig: "existing-dev",
        server: controlPlane.server,
      }),
    ]);
    expectNoCredentials(state);
    await backend.create(target(), version); // idempotent
    expect(JSON.parse(readFileSync(join(stateDirectory, "existing.json"), "utf8")).bindings).toHaveLength(1);
  });

  it("reports provisioning with the reason while the cluster does not answer, ready once it does", async () => {
    const [closedPort] = await freePorts(1);
    const unreachable = parse(kubeconfig);
    unreachable.clusters[0].cluster.server = `https://127.0.0.1:${closedPort}`;
    secrets.set("clusters/shared-dev/kubeconfig", stringify(unreachable));
    const backend = newBackend();
    await backend.create(target(), "1.36.3");
    const refused = await backend.observe(target());
    expect(refused).toMatchObject({ exists: true, phase: "provisioning", version: "1.36.3" });
    expect(refused.exists && refused.message).toMatch(
      new RegExp(
        `^the API server https://127.0.0.1:${closedPort} does not answer GET /version: .*ECONNREFUSED`,
      ),
    );
    expect(await backend.adminAccess(target())).toBeUndefined();

    // A server that accepts connections and never answers: the probe gives up after probeTimeout.
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    unreachable.clusters[0].cluster.server = `https://127.0.0.1:${port}`;
    secrets.set("clusters/shared-dev/kubeconfig", stringify(unreachable));
    try {
      const started = Date.now();
      const hanging = await newBackend({ probeTimeout: "300ms" }).observe(target());
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(hanging.exists && hanging.message).toMatch(/does not answer GET \/version: no answer in 300 ms/);
    } finally {
      silent.close();
    }

    secrets.set("clusters/shared-dev/kubeconfig", kubeconfig); // the Secret was fixed
    expect(await backend.observe(target())).toMatchObject({ phase: "ready", endpoint: controlPlane.server });
  });

  it("reports provisioning with the reason when the Secret disappears after binding", async () => {
    const backend = newBackend();
    await backend.create(target(), await runningVersion());
    secrets.clear();
    const observation = await backend.observe(target());
    expect(observation).toMatchObject({ exists: true, phase: "provisioning" });
    expect(observation.exists && observation.message).toMatch(
      /^Secret clusters\/shared-dev or its key "kubeconfig" does not exist/,
    );
  });

  it("keeps the version it was given and refuses to change it: the engine does not upgrade clusters it does not own", async () => {
    const backend = newBackend();
    const version = await runningVersion();
    await expect(backend.update(target(), version)).rejects.toThrow(/is not bound to an existing cluster/);
    await backend.create(target(), version);
    await backend.update(target(), version); // what it runs: a no-op
    await expect(backend.update(target(), "1.99.0")).rejects.toThrow(
      `the engine does not upgrade clusters it does not own: cluster team-a/shared is bound to an existing cluster running Kubernetes ${version}, not 1.99.0; upgrade that cluster yourself and list its new version in ProviderConfig existing-dev, or set spec.kubernetes.version to ${version}`,
    );
  });

  it("releases the binding on delete, idempotently, and the cluster keeps running", async () => {
    const backend = newBackend();
    await backend.delete(target()); // never bound: succeeds
    await backend.create(target(), await runningVersion());
    await backend.create(target({ uid: "second-cluster", name: "other" }), await runningVersion());
    await backend.delete(target());
    expect(await backend.observe(target())).toEqual({ exists: false });
    await backend.delete(target());
    expect(await backend.observe(target({ uid: "second-cluster", name: "other" }))).toMatchObject({
      phase: "ready",
    });
    expect(controlPlane.apiServer.hasExited()).toBe(false);
    const namespaces = await controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.length).toBeGreaterThan(0);
  });

  it("keeps bindings across a restart (a new instance on the same state folder)", async () => {
    const version = await runningVersion();
    await newBackend().create(target(), version);
    const restarted = newBackend();
    expect(await restarted.observe(target())).toMatchObject({ exists: true, phase: "ready", version });
    await restarted.delete(target());
    expect(await newBackend().observe(target())).toEqual({ exists: false });
  });

  it("gives the Secret's kubeconfig, read anew, as admin access that lists namespaces", async () => {
    const backend = newBackend();
    expect(await backend.adminAccess(target())).toBeUndefined();
    await backend.create(target(), await runningVersion());
    const access = await backend.adminAccess(target());
    expect(access?.kubeconfig).toBe(kubeconfig);
    const asAdmin = new KubeConfig();
    asAdmin.loadFromString(access?.kubeconfig ?? "");
    const namespaces = await asAdmin.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("default");

    const rotated = `${kubeconfig}\n# rotated\n`;
    secrets.set("clusters/shared-dev/kubeconfig", rotated);
    expect((await backend.adminAccess(target()))?.kubeconfig).toBe(rotated);
  });
});
