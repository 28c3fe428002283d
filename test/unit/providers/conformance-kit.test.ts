/** The conformance kit's options and rules that need no API server: settings for readOffer, declared scopes, incomplete clusters. */
import { describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../../src/api/backend.ts";
import type { BackendFactory, ClusterBackend } from "../../../src/api/backend-contract.ts";
import { ConformanceError, checkBackendConformance } from "../../../src/providers/conformance.ts";
import {
  describePermission,
  requiredPermissions,
  scopeProblem,
} from "../../../src/providers/conformance-access.ts";
import { SimulatedBackend, type SimulatedBackendOptions } from "../../../src/providers/simulated.ts";

/** The simulated backend without delays; in `stateDirectory` where given, so that the kit's restarts find its clusters. */
const quickSimulated = (stateDirectory?: string, more: SimulatedBackendOptions = {}) =>
  new SimulatedBackend({
    ...(stateDirectory ? { stateDirectory } : {}),
    provisionDelayMs: 0,
    updateDelayMs: 0,
    deleteDelayMs: 0,
    ...more,
  });

/**
 * The simulated backend, with a `readOffer` that needs `spec.settings.region`, as a cloud's offer would. It keeps
 * its clusters in the kit's state folder, so the kit's restarts find them (without it, a run that restarts and
 * then waits for a cluster fails, and shrinking such runs outlasted the test's timeout).
 */
const regional: BackendFactory = (context) => {
  const backend: ClusterBackend = quickSimulated(context.stateDirectory);
  backend.readOffer = async (config) => {
    const region = config.spec.settings?.region;
    if (typeof region !== "string") throw new Error("settings.region is required");
    return { versions: [{ version: "1.35.1" }], traits: [] };
  };
  return backend;
};

/** Makes `backend` report what `change` makes of each of its observations: a backend that misreports. */
function misreporting(
  backend: ClusterBackend,
  change: (observation: ClusterObservation, target: ClusterTarget) => ClusterObservation,
): void {
  const observe = backend.observe.bind(backend);
  backend.observe = async (target) => change(await observe(target), target);
}

/** Tells `seen` of each target `backend[command]` is called for, before the command runs. */
function beforeCalling(
  backend: SimulatedBackend,
  command: "hibernate" | "wake",
  seen: (target: ClusterTarget) => void,
): (target: ClusterTarget) => Promise<void> {
  const call = backend[command].bind(backend);
  backend[command] = (target) => {
    seen(target);
    return call(target);
  };
  return call;
}

describe("the kit's config", () => {
  it("gives the settings it is given to readOffer through its default config", async () => {
    await checkBackendConformance(regional, { numRuns: 3, settings: { region: "eu" } });
  });

  it("fails a config the backend refuses with what to give the kit, not an unexpected error", async () => {
    const failure = await checkBackendConformance(regional, { numRuns: 1 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toContain(
      'the config is served: readOffer refused ProviderConfig {"backend":"simulated"}: settings.region is required (give the kit the config or settings the backend needs',
    );
  });
});

describe("incomplete clusters", () => {
  it("are not ready: a backend that never repairs what it reports missing fails to become ready", async () => {
    const neverWhole: BackendFactory = () => {
      const backend = quickSimulated();
      misreporting(backend, (o) =>
        o.exists && o.phase === "ready" ? { ...o, incomplete: "its admin account is missing" } : o,
      );
      return backend;
    };
    const failure = await checkBackendConformance(neverWhole, { numRuns: 1, readyTimeoutMs: 300 }).catch(
      (error: unknown) => error,
    );
    expect((failure as Error).message).toContain("eventually: awaitReady(c0) not reached after 300 ms");
    expect((failure as Error).message).toContain('"incomplete":"its admin account is missing"');
  });
});

describe("a create that failed", () => {
  /**
   * The simulated backend whose first create of each Cluster object fails after it was accepted, as kind's does
   * when `kind create` gives up: seen once, then reported absent until created again (kind's retry state).
   */
  const failingFirstCreate = (): { factory: BackendFactory; reordered: () => number } => {
    const tries = new Map<string, { creates: number; looks: number }>();
    let reordered = 0;
    const factory: BackendFactory = (context) => {
      const backend = quickSimulated(context.stateDirectory);
      const create = backend.create.bind(backend);
      const observe = backend.observe.bind(backend);
      const remove = backend.delete.bind(backend);
      backend.create = async (target, version) => {
        const tried = tries.get(target.uid) ?? { creates: 0, looks: 0 };
        tried.creates += 1;
        if (tried.creates === 2) reordered += 1;
        tries.set(target.uid, tried);
        await create(target, version);
      };
      backend.observe = async (target): Promise<ClusterObservation> => {
        const tried = tries.get(target.uid);
        const o = await observe(target);
        if (!o.exists || !tried || tried.creates > 1) return o;
        tried.looks += 1;
        return tried.looks === 1 ? { ...o, phase: "provisioning", endpoint: undefined } : { exists: false };
      };
      backend.delete = async (target) => {
        tries.delete(target.uid);
        await remove(target);
      };
      return backend;
    };
    return { factory, reordered: () => reordered };
  };

  it("is ordered again while the backend reports it absent, as the engine's provisioning state does", async () => {
    const backend = failingFirstCreate();
    await checkBackendConformance(backend.factory, { numRuns: 5, readyTimeoutMs: 2_000 });
    expect(backend.reordered()).toBeGreaterThan(0);
  });

  it("but a cluster once ready that the backend then reports absent fails the kit", async () => {
    const forgetful: BackendFactory = () => {
      const backend = quickSimulated();
      const seenReady = new Set<string>();
      misreporting(backend, (o, target) => {
        if (seenReady.has(target.uid)) return { exists: false };
        if (o.exists && o.phase === "ready") seenReady.add(target.uid);
        return o;
      });
      return backend;
    };
    const failure = await checkBackendConformance(forgetful, { numRuns: 1, readyTimeoutMs: 300 }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toContain("a cluster once ready exists until deleted");
  });
});

describe("what an admin kubeconfig must be allowed to do", () => {
  it("without a scope: cluster roles and bindings, namespaces, and token accounts in every namespace", () => {
    expect(requiredPermissions(undefined).map(describePermission)).toEqual([
      "create clusterroles.rbac.authorization.k8s.io cluster-wide",
      "create clusterrolebindings.rbac.authorization.k8s.io cluster-wide",
      "create namespaces cluster-wide",
      "create serviceaccounts in every namespace",
      "create serviceaccounts/token in every namespace",
    ]);
  });

  it("with a scope: roles, bindings and token accounts in each of its namespaces, and nothing cluster-wide", () => {
    const required = requiredPermissions({ namespaces: ["a", "b"], accessNamespace: "a" });
    expect(required.map(describePermission)).toEqual([
      'create roles.rbac.authorization.k8s.io in namespace "a"',
      'create rolebindings.rbac.authorization.k8s.io in namespace "a"',
      'create serviceaccounts in namespace "a"',
      'create serviceaccounts/token in namespace "a"',
      'create roles.rbac.authorization.k8s.io in namespace "b"',
      'create rolebindings.rbac.authorization.k8s.io in namespace "b"',
      'create serviceaccounts in namespace "b"',
      'create serviceaccounts/token in namespace "b"',
    ]);
    expect(required.every((p) => p.namespace !== undefined)).toBe(true);
  });

  it("a scope must name namespaces, and keep access objects in one of them", () => {
    expect(scopeProblem(undefined)).toBeUndefined();
    expect(scopeProblem({ namespaces: ["a"], accessNamespace: "a" })).toBeUndefined();
    expect(scopeProblem({ namespaces: [], accessNamespace: "a" })).toContain("scope.namespaces is empty");
    expect(scopeProblem({ namespaces: ["a", "b"], accessNamespace: "c" })).toBe(
      'scope.accessNamespace "c" is not one of scope.namespaces (a, b)',
    );
  });
});

describe("hibernation (contract 1.6)", () => {
  /** The simulated backend on the kit's state folder, quick; `change` alters it for one test. */
  const sleepy =
    (change: (backend: SimulatedBackend) => void = () => {}): BackendFactory =>
    (context) => {
      const backend = quickSimulated(context.stateDirectory, { hibernateDelayMs: 20, wakeDelayMs: 20 });
      change(backend);
      return backend;
    };
  const failureOf = (factory: BackendFactory) =>
    checkBackendConformance(factory, { numRuns: 5, readyTimeoutMs: 500 }).catch((error: unknown) => error);

  it("is asked of a backend that has it, which passes", async () => {
    let calls = 0;
    await checkBackendConformance(
      sleepy((backend) => {
        beforeCalling(backend, "hibernate", () => calls++);
      }),
      { numRuns: 10, readyTimeoutMs: 1_000 },
    );
    expect(calls).toBeGreaterThan(0);
  });

  it("is not asked of a backend without it", async () => {
    const calls = { hibernate: 0 };
    await checkBackendConformance(
      sleepy((backend) => {
        for (const name of ["hibernate", "wake"] as const)
          Object.defineProperty(backend, name, { value: undefined });
        misreporting(backend, (o) => {
          if (o.exists && o.phase.startsWith("hibernat")) calls.hibernate++;
          return o;
        });
      }),
      { numRuns: 5, readyTimeoutMs: 1_000 },
    );
    expect(calls.hibernate).toBe(0);
  });

  it("fails a wake that changes the endpoint", async () => {
    const failure = await failureOf(
      sleepy((backend) => {
        const woken = new Set<string>();
        beforeCalling(backend, "wake", (target) => woken.add(target.uid));
        misreporting(backend, (o, target) =>
          o.exists && o.endpoint && woken.has(target.uid)
            ? { ...o, endpoint: o.endpoint.replace(":6443", ":7443") }
            : o,
        );
      }),
    );
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toContain("wake keeps the endpoint");
    expect((failure as Error).message).toMatch(/wake\(c0/);
  });

  it("fails a hibernate that never reports hibernated", async () => {
    const failure = await failureOf(
      sleepy((backend) => {
        misreporting(backend, (o) =>
          o.exists && o.phase === "hibernated" ? { ...o, phase: "hibernating" } : o,
        );
      }),
    );
    expect((failure as Error).message).toContain("eventually: hibernate(c0, twice) hibernated not reached");
  });

  it("fails a backend that forgets the sleep on a restart", async () => {
    // Its clusters outlive a restart (a state folder), its wish to sleep does not: a restart wakes them.
    const asleep = new Set<string>();
    const forgetful: BackendFactory = (context) => {
      const backend = quickSimulated(context.stateDirectory);
      const instance = new Set<string>();
      beforeCalling(backend, "hibernate", (target) => {
        instance.add(target.uid);
        asleep.add(target.uid);
      });
      const wake = beforeCalling(backend, "wake", (target) => instance.delete(target.uid));
      const observe = backend.observe.bind(backend);
      backend.observe = async (target) => {
        if (asleep.has(target.uid) && !instance.has(target.uid)) {
          asleep.delete(target.uid);
          await wake(target);
        }
        return observe(target);
      };
      return backend;
    };
    // A seed whose sequences reach a new instance (restart or move) between a hibernate and a look (not every set of 100 does).
    const failure = await checkBackendConformance(forgetful, {
      numRuns: 100,
      readyTimeoutMs: 500,
      seed: 7,
    }).catch((error: unknown) => error);
    expect((failure as Error).message).toContain("a hibernated cluster sleeps until woken");
    expect((failure as Error).message).toMatch(/hibernate\(c\d.*(restart|move)\(\)/);
  }, 60_000);

  it("fails a backend that has hibernate but no wake", async () => {
    const failure = await failureOf(
      sleepy((backend) => Object.defineProperty(backend, "wake", { value: undefined })),
    );
    expect((failure as Error).message).toContain(
      "hibernation is a pair: the backend has hibernate but no wake",
    );
  });

  it("wakes nothing on create, and deletes from hibernated", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0, hibernateDelayMs: 0, deleteDelayMs: 0 });
    const target = {
      uid: "a1b2c3d4-0000-4000-8000-000000000001",
      namespace: "ns",
      name: "c",
      tenancy: "Shared" as const,
      profile: "p",
      providerConfig: "simulated",
    };
    await backend.create(target, "1.34.2");
    const ready = await backend.observe(target);
    await backend.hibernate(target);
    await backend.hibernate(target);
    await backend.create(target, "1.34.2");
    expect(await backend.observe(target)).toMatchObject({ exists: true, phase: "hibernated" });
    await expect(backend.update(target, "1.33.6")).rejects.toThrow(/hibernated; wake it first/);
    await backend.wake(target);
    await backend.wake(target);
    expect(await backend.observe(target)).toEqual(ready);
    await backend.hibernate(target);
    await backend.delete(target);
    expect(await backend.observe(target)).toEqual({ exists: false });
  });
});
