/** The `existing` backend: bring-your-own clusters, shared by the Clusters bound to them, never created or destroyed. */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  VersionApi,
} from "@kubernetes/client-node";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  SecretReader,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import { type Logger, silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { describeCluster, errorLine } from "./shared/error-wording.ts";
import {
  type KubeconfigAccess,
  type KubeconfigSecretRef,
  kubeconfigSecretRef,
  readKubeconfigSecret,
} from "./shared/kubeconfig-secret.ts";
import { RecordFile } from "./shared/record-file.ts";
import { durationOption } from "./shared/settings.ts";

/** Knobs of the existing backend. */
export interface ExistingBackendOptions {
  /** Reads the Secret holding the kubeconfig (the backend's only way to it). */
  readonly readSecret: SecretReader;
  /** JSON file recording which Clusters are bound. */
  readonly stateFile: string;
  /** How long a reachability check (`GET /version`) may take. Default 5 s. */
  readonly probeTimeoutMs?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
}

/** A Cluster bound to the existing cluster of its ProviderConfig. */
interface Binding {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly providerConfig: string;
  readonly secretRef: KubeconfigSecretRef;
  /** The kubeconfig's server when the binding was made. */
  readonly server: string;
  /** The version asked for when the binding was made (reported while the cluster cannot be asked). */
  readonly version: string;
  readonly boundAt: string;
}

/** Turns `v1.33.3`, `v1.33.3+k3s1` or `1.33.3-gke.100` into `1.33.3`; undefined when there is no X.Y.Z. */
export function normaliseVersion(gitVersion: string): string | undefined {
  return /^v?(\d+\.\d+\.\d+)/.exec(gitVersion.trim())?.[1];
}

/**
 * A {@link ClusterBackend} over clusters that already exist. Each ProviderConfig names one cluster by
 * the Secret holding its kubeconfig; every Cluster bound to the config shares it.
 *
 * Flow: `create` checks tenancy and settings, reads and parses the kubeconfig, and records the binding
 * (uid → config, server) in `existing.json`; `observe` reports a bound Cluster ready at the kubeconfig's
 * server with the version `GET /version` returns (provisioning, with the reason, while that fails);
 * `delete` forgets the binding; `adminAccess` hands out the Secret's kubeconfig, read anew each time.
 *
 * Guarantees: nothing is ever created, changed or destroyed on the cluster; the kubeconfig never
 * appears in an observation, a log or an error (parse errors are replaced by a fixed message).
 */
export class ExistingBackend implements ClusterBackend {
  readonly name = "existing";
  readonly capabilities = { adminAccess: true, oidc: false } as const;
  readonly #readSecret: SecretReader;
  readonly #probeTimeoutMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #bindings: RecordFile<Binding>;

  constructor(options: ExistingBackendOptions) {
    this.#readSecret = options.readSecret;
    this.#probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger;
    this.#bindings = new RecordFile(options.stateFile, "bindings");
  }

  /** The versions as the ProviderConfig lists them: the person who wrote it says what the cluster runs. */
  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    return config.spec.supportedVersions ?? [];
  }

  traits(config: ProviderConfig): readonly string[] {
    return [...new Set(["shared", ...(config.spec.traits ?? [])])];
  }

  /** How many Clusters are bound right now. */
  get boundCount(): number {
    return this.#bindings.size;
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const binding = this.#bindings.get(target.uid);
    if (!binding) return { exists: false };
    let access: KubeconfigAccess;
    try {
      access = await this.#access(
        this.#refFor(target, binding),
        target.providerConfig || binding.providerConfig,
      );
    } catch (error) {
      return {
        exists: true,
        phase: "provisioning",
        version: binding.version,
        message: (error as Error).message,
      };
    }
    const info = `existing cluster at ${access.server}`;
    const probe = await this.#probe(access);
    if (!probe.ok) {
      return {
        exists: true,
        phase: "provisioning",
        version: binding.version,
        info,
        message: `the API server ${access.server} does not answer GET /version: ${probe.reason}`,
      };
    }
    return { exists: true, phase: "ready", version: probe.version, endpoint: access.server, info };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    if (target.tenancy !== "Shared") {
      throw new Error(
        `existing clusters are shared; set spec.tenancy: Shared (Cluster ${target.namespace}/${target.name} asks for ${target.tenancy})`,
      );
    }
    if (this.#bindings.has(target.uid)) return; // bound already: one binding per Cluster
    const ref = kubeconfigSecretRef(target.settings, target.providerConfig);
    const access = await this.#access(ref, target.providerConfig);
    this.#bindings.put({
      uid: target.uid,
      namespace: target.namespace,
      name: target.name,
      providerConfig: target.providerConfig,
      secretRef: ref,
      server: access.server,
      version,
      boundAt: new Date(this.#clock.now()).toISOString(),
    });
    this.#log.info("bound to existing cluster", {
      cluster: `${target.namespace}/${target.name}`,
      server: access.server,
      providerConfig: target.providerConfig,
    });
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const binding = this.#bindings.get(target.uid);
    if (!binding)
      throw new Error(`cannot update ${describeCluster(target)}: it is not bound to an existing cluster`);
    const observation = await this.observe(target);
    const running = observation.exists ? observation.version : binding.version;
    if (normaliseVersion(running) === normaliseVersion(version)) return;
    throw new Error(
      `the engine does not upgrade clusters it does not own: ${describeCluster(target)} is bound to an existing cluster running Kubernetes ${running}, not ${version}; upgrade that cluster yourself and list its new version in ProviderConfig ${binding.providerConfig}, or set spec.kubernetes.version to ${running}`,
    );
  }

  /** Releases the binding; the cluster itself is left as it is. */
  async delete(target: ClusterTarget): Promise<void> {
    if (!this.#bindings.has(target.uid)) return;
    this.#bindings.remove(target.uid);
    this.#log.info("released existing cluster", { cluster: `${target.namespace}/${target.name}` });
  }

  /** The Secret's kubeconfig once the cluster answers: by `observed` (the runtime's look moments ago), else by looking now. */
  async adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined> {
    const binding = this.#bindings.get(target.uid);
    if (!binding) return undefined;
    const observation = observed ?? (await this.observe(target));
    if (!observation.exists || observation.phase !== "ready") return undefined;
    const access = await this.#access(this.#refFor(target, binding), binding.providerConfig);
    return { kubeconfig: access.text };
  }

  /** The Secret the target's ProviderConfig names now, or the one recorded at binding time. */
  #refFor(target: ClusterTarget, binding: Binding): KubeconfigSecretRef {
    try {
      return kubeconfigSecretRef(target.settings, target.providerConfig);
    } catch {
      return binding.secretRef; // e.g. the ProviderConfig is gone while its Clusters are deleted
    }
  }

  async #access(ref: KubeconfigSecretRef, providerConfig: string): Promise<KubeconfigAccess> {
    return readKubeconfigSecret(this.#readSecret, ref, providerConfig);
  }

  /** `GET /version` with a time limit: the version it reports, or why there is none. */
  async #probe(
    access: KubeconfigAccess,
  ): Promise<
    { readonly ok: true; readonly version: string } | { readonly ok: false; readonly reason: string }
  > {
    const timeoutMs = this.#probeTimeoutMs;
    // The generated clients take middleware per call; this one puts a deadline on the request.
    const withTimeout: ObservableMiddleware = {
      pre: (context: RequestContext) => {
        context.setSignal(AbortSignal.timeout(timeoutMs));
        return new Observable(Promise.resolve(context));
      },
      post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
    };
    try {
      const info = await access.kubeConfig
        .makeApiClient(VersionApi)
        .getCode({}, { middleware: [withTimeout], middlewareMergeStrategy: "append" });
      const version = normaliseVersion(info.gitVersion ?? "");
      if (!version) return { ok: false, reason: `it reports version "${info.gitVersion}", not X.Y.Z` };
      return { ok: true, version };
    } catch (error) {
      const reason =
        error instanceof Error && error.name === "TimeoutError"
          ? `no answer in ${timeoutMs} ms`
          : errorLine(error);
      return { ok: false, reason };
    }
  }
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `existing` backend from `--backend-option`s: `probeTimeout` (how long `GET /version` may take,
 * e.g. `5s`, the default). Bindings live in `existing.json` in the state folder; kubeconfigs are read
 * through the context's Secret reader and never stored.
 */
export const createBackend: BackendFactory = (context: BackendContext) => {
  const probeTimeoutMs = durationOption(context.options, "probeTimeout", {
    backend: "existing",
    examples: "500ms or 5s",
    positive: true,
  });
  mkdirSync(context.stateDirectory, { recursive: true });
  return new ExistingBackend({
    readSecret: context.readSecret,
    stateFile: join(context.stateDirectory, "existing.json"),
    ...(probeTimeoutMs === undefined ? {} : { probeTimeoutMs }),
    clock: context.clock,
    log: context.log.with({ backend: "existing" }),
  });
};
