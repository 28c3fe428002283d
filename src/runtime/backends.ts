/**
 * The backends one engine drives. Either one backend fixed at start (`--backend`), or — as openMCP deploys a
 * provider, with no backend flag — each backend a ProviderConfig of ours names in `spec.backend`, made on
 * first use. Every call about a cluster goes to the backend of the cluster's ProviderConfig.
 */
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { BackendCapabilities, ClusterBackend, OidcTrust } from "../api/backend-contract.ts";
import type { ProviderConfig } from "../api/provider-config.ts";

/** Backends chosen by the ProviderConfigs: the names that may be chosen, and how one is made. */
export interface BackendCatalog {
  /** What a ProviderConfig may name (the built-in backends). */
  readonly names: readonly string[];
  /** Makes the backend `name`; called once per name (again only after a failure). */
  load(name: string): Promise<ClusterBackend>;
}

/** What an engine is given: one backend, or a catalog the ProviderConfigs choose from. */
export type BackendSource = ClusterBackend | BackendCatalog;

const isCatalog = (source: BackendSource): source is BackendCatalog => "load" in source;

/** A cluster's backend cannot be told or made; the message says which and why (it goes on the object). */
export class BackendUnavailableError extends Error {
  override readonly name = "BackendUnavailableError";
}

/**
 * Guarantees: a backend is made at most once at a time and kept once made (a failed make is tried again at
 * the next use, so a fixed environment heals); a ProviderConfig naming a backend outside the catalog gets
 * none. Caveats: a cluster whose ProviderConfig is gone has no known backend in catalog mode (nor settings).
 */
export class Backends {
  readonly #source: BackendSource;
  readonly #configs: (name: string) => ProviderConfig | undefined;
  readonly #made = new Map<string, Promise<ClusterBackend>>();
  readonly #ready = new Map<string, ClusterBackend>();
  /** Every call about a cluster, routed to its backend: what the kinds are given as `backend`. */
  readonly router: ClusterBackend;

  /** `configs` reads a ProviderConfig by name (the engine's cache). */
  constructor(source: BackendSource, configs: (name: string) => ProviderConfig | undefined) {
    this.#source = source;
    this.#configs = configs;
    this.router = isCatalog(source) ? routingBackend(this) : source;
  }

  /** The backend names ProviderConfigs of ours are served with (and that a free config may be claimed for). */
  get names(): readonly string[] {
    return isCatalog(this.#source) ? this.#source.names : [this.#source.name];
  }

  /** Whether ProviderConfigs naming `name` are served here. */
  serves(name: string): boolean {
    return this.names.includes(name);
  }

  /** The backend of ProviderConfig `config`, made if it is not yet. */
  async forConfig(config: ProviderConfig): Promise<ClusterBackend> {
    return this.#named(config.spec.backend, `ProviderConfig ${config.metadata.name ?? ""}`);
  }

  /** The backend of the cluster `target` describes: its ProviderConfig's. */
  async of(target: ClusterTarget): Promise<ClusterBackend> {
    if (!isCatalog(this.#source)) return this.#source;
    const config = this.#configs(target.providerConfig);
    if (!config)
      throw new BackendUnavailableError(
        `the backend of ${target.namespace}/${target.name} is unknown: its ProviderConfig "${target.providerConfig}" does not exist`,
      );
    return this.forConfig(config);
  }

  /** The backends made so far (one when fixed). */
  loaded(): readonly ClusterBackend[] {
    return isCatalog(this.#source) ? [...this.#ready.values()] : [this.#source];
  }

  /** Releases every backend made. */
  async close(): Promise<void> {
    await Promise.all(this.loaded().map((backend) => backend.close?.()));
  }

  #named(name: string, whose: string): Promise<ClusterBackend> {
    const source = this.#source;
    if (!isCatalog(source)) {
      if (name === source.name) return Promise.resolve(source);
      throw new BackendUnavailableError(
        `${whose} names backend "${name}"; this engine runs "${source.name}"`,
      );
    }
    if (!source.names.includes(name))
      throw new BackendUnavailableError(
        `${whose} names backend "${name}", which is not one this engine can choose (${source.names.join(", ")}); a backend module or package is served only when the engine is started with --backend naming it`,
      );
    let made = this.#made.get(name);
    if (!made) {
      made = source.load(name).then(
        (backend) => {
          this.#ready.set(name, backend);
          return backend;
        },
        (error: unknown) => {
          this.#made.delete(name);
          throw new BackendUnavailableError((error as Error).message, { cause: error });
        },
      );
      this.#made.set(name, made);
    }
    return made;
  }
}

/**
 * A {@link ClusterBackend} whose every call about a cluster goes to that cluster's backend. What has no
 * cluster (its name, capabilities) speaks for all made so far; callers that need one cluster's ask
 * {@link Backends.of}.
 */
function routingBackend(backends: Backends): ClusterBackend {
  const any = (capability: keyof BackendCapabilities) =>
    backends.loaded().some((backend) => backend.capabilities[capability]);
  const sync = <R>(config: ProviderConfig, call: (backend: ClusterBackend) => R): R => {
    const backend = backends.loaded().find((made) => made.name === config.spec.backend);
    if (!backend) throw new BackendUnavailableError(`backend "${config.spec.backend}" is not made yet`);
    return call(backend);
  };
  return {
    get name() {
      return `chosen by ProviderConfigs (${backends.names.join(", ")})`;
    },
    capabilities: {
      get adminAccess() {
        return any("adminAccess");
      },
      get oidc() {
        return any("oidc");
      },
    },
    supportedVersions: (config) => sync(config, (backend) => backend.supportedVersions(config)),
    traits: (config) => sync(config, (backend) => backend.traits(config)),
    readOffer: async (config) => {
      const backend = await backends.forConfig(config);
      return backend.readOffer
        ? backend.readOffer(config)
        : { versions: backend.supportedVersions(config), traits: backend.traits(config) };
    },
    observe: async (target) => (await backends.of(target)).observe(target),
    create: async (target, version) => (await backends.of(target)).create(target, version),
    update: async (target, version) => (await backends.of(target)).update(target, version),
    delete: async (target) => (await backends.of(target)).delete(target),
    hibernate: async (target) => {
      const backend = await backends.of(target);
      if (!backend.hibernate) throw new Error(`backend ${backend.name} cannot put clusters to sleep`);
      await backend.hibernate(target);
    },
    wake: async (target) => {
      const backend = await backends.of(target);
      if (!backend.wake) throw new Error(`backend ${backend.name} cannot wake clusters`);
      await backend.wake(target);
    },
    adminAccess: async (target, observed?: ClusterObservation) =>
      (await backends.of(target)).adminAccess(target, observed),
    trustOidcIssuers: async (target, issuers: readonly OidcTrust[]) => {
      const backend = await backends.of(target);
      if (!backend.trustOidcIssuers) throw new Error(`backend ${backend.name} cannot set up OIDC trust`);
      await backend.trustOidcIssuers(target, issuers);
    },
    close: () => backends.close(),
  };
}
