/** The engine's backends: one fixed, or each ProviderConfig's own, made once on first use and routed to by cluster. */
import { describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import type { ClusterBackend } from "../../../src/api/backend-contract.ts";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import { SimulatedBackend } from "../../../src/providers/simulated.ts";
import { Backends, BackendUnavailableError } from "../../../src/runtime/backends.ts";
import { aProviderConfig } from "../../support/builders.ts";
import { delegatingBackend } from "../../support/delegating-backend.ts";

/** A simulated backend under another name, so that two differ. */
const named = (name: string, capabilities = { adminAccess: false, oidc: false }): ClusterBackend =>
  delegatingBackend(new SimulatedBackend({ provisionDelayMs: 0 }), name, capabilities);

const target = (providerConfig: string, name = "c1"): ClusterTarget => ({
  uid: `uid-${name}`,
  namespace: "ns",
  name,
  tenancy: "Exclusive",
  profile: `p.${providerConfig}`,
  providerConfig,
});

/** A catalog of `names` whose loads are counted, and a config store. */
function catalog(names: string[], failFirst: string[] = []) {
  const loads: string[] = [];
  const failing = new Set(failFirst);
  const configs = new Map<string, ProviderConfig>();
  const backends = new Backends(
    {
      names,
      async load(name) {
        loads.push(name);
        if (failing.delete(name)) throw new Error(`backend "${name}" could not start: no socket`);
        return named(name, { adminAccess: name === "local", oidc: false });
      },
    },
    (config) => configs.get(config),
  );
  const config = (name: string, backend: string) => configs.set(name, aProviderConfig({ name, backend }));
  return { backends, loads, config, configs };
}

describe("Backends, fixed", () => {
  it("routes everything to the one backend and serves only configs naming it", async () => {
    const only = named("kind");
    const backends = new Backends(only, () => undefined);
    expect(backends.router).toBe(only);
    expect(backends.names).toEqual(["kind"]);
    expect(await backends.of(target("anything"))).toBe(only);
    await expect(backends.forConfig(aProviderConfig({ name: "x", backend: "local" }))).rejects.toThrow(
      'ProviderConfig x names backend "local"; this engine runs "kind"',
    );
  });
});

describe("Backends, chosen by ProviderConfigs", () => {
  it("makes each named backend once, on first use, however many ask at once", async () => {
    const { backends, loads, config } = catalog(["simulated", "local"]);
    config("a", "simulated");
    config("b", "local");
    expect(loads).toEqual([]);
    const [first, second, third] = await Promise.all([
      backends.of(target("a", "c1")),
      backends.of(target("a", "c2")),
      backends.of(target("b", "c3")),
    ]);
    expect(first).toBe(second);
    expect(first?.name).toBe("simulated");
    expect(third?.name).toBe("local");
    expect(loads.sort()).toEqual(["local", "simulated"]);
  });

  it("routes each cluster's calls to its ProviderConfig's backend", async () => {
    const { backends, config } = catalog(["simulated", "local"]);
    config("a", "simulated");
    config("b", "local");
    await backends.router.create(target("a", "one"), "1.36.3");
    await backends.router.create(target("b", "two"), "1.36.3");
    const [simulated, local] = [await backends.of(target("a")), await backends.of(target("b"))];
    expect((await simulated.observe(target("a", "one"))).exists).toBe(true);
    expect((await simulated.observe(target("b", "two"))).exists).toBe(false);
    expect((await local.observe(target("b", "two"))).exists).toBe(true);
    expect((await local.observe(target("a", "one"))).exists).toBe(false);
  });

  it("refuses a name outside the catalog, saying how a module backend is served", async () => {
    const { backends } = catalog(["simulated"]);
    const error = await backends
      .forConfig(aProviderConfig({ name: "evil", backend: "./evil.mjs" }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toBe(
      'ProviderConfig evil names backend "./evil.mjs", which is not one this engine can choose (simulated); a backend module or package is served only when the engine is started with --backend naming it',
    );
    expect(backends.serves("./evil.mjs")).toBe(false);
    expect(backends.serves("simulated")).toBe(true);
  });

  it("tries a backend that could not be made again at the next use", async () => {
    const { backends, loads, config } = catalog(["kind"], ["kind"]);
    config("k", "kind");
    await expect(backends.of(target("k"))).rejects.toThrow('backend "kind" could not start: no socket');
    expect((await backends.of(target("k"))).name).toBe("kind");
    expect(loads).toEqual(["kind", "kind"]);
  });

  it("says which cluster's backend is unknown when its ProviderConfig is gone", async () => {
    const { backends } = catalog(["simulated"]);
    await expect(backends.router.observe(target("gone", "orphan"))).rejects.toThrow(
      'the backend of ns/orphan is unknown: its ProviderConfig "gone" does not exist',
    );
  });

  it("speaks for the backends made so far where no cluster is named", async () => {
    const { backends, config } = catalog(["simulated", "local"]);
    expect(backends.router.capabilities.adminAccess).toBe(false);
    config("b", "local");
    await backends.of(target("b"));
    expect(backends.router.capabilities.adminAccess).toBe(true);
    expect(backends.router.name).toBe("chosen by ProviderConfigs (simulated, local)");
  });

  it("reads a config's offer from its own backend", async () => {
    const { backends, configs, config } = catalog(["simulated"]);
    config("a", "simulated");
    const offer = await backends.router.readOffer?.(
      aProviderConfig({ name: "a", supportedVersions: [{ version: "1.36.3" }] }),
    );
    expect(offer?.versions.map((v) => v.version)).toEqual(["1.36.3"]);
    expect(configs.size).toBe(1);
  });
});
