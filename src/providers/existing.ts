/** The `existing` backend: bring-your-own clusters, shared by the Clusters bound to them, never created or destroyed. */

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  KubeConfig,
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
import type { JsonObject } from "../api/common.ts";
import { parseDuration } from "../api/duration.ts";
import { type Logger, silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { writeFileAtomicallySync } from "../util/atomic-file.ts";

/** Where the kubeconfig of the existing cluster is: `settings.kubeconfigSecretRef` of the ProviderConfig. */
export interface KubeconfigSecretRef {
  readonly namespace: string;
  readonly name: string;
  /** Key in the Secret's data; default `kubeconfig`. */
  readonly key: string;
}

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

/** The kubeconfig read from the Secret, parsed. */
export interface KubeconfigAccess {
  readonly text: string;
  readonly kubeConfig: KubeConfig;
  readonly server: string;
}

/**
 * Reads and parses the kubeconfig a ProviderConfig's `kubeconfigSecretRef` names (also the `gardener` backend's
 * way to its garden); errors name the Secret and the ProviderConfig and never quote the Secret's content.
 */
export async function readKubeconfigSecret(
  readSecret: SecretReader,
  ref: KubeconfigSecretRef,
  providerConfig: string,
): Promise<KubeconfigAccess> {
  const secret = `Secret ${ref.namespace}/${ref.name}`;
  let text: string | undefined;
  try {
    text = await readSecret(ref.namespace, ref.name, ref.key);
  } catch (error) {
    const reason = String((error as Error)?.message ?? error).split("\n")[0];
    throw new Error(
      `cannot read ${secret} (kubeconfigSecretRef of ProviderConfig ${providerConfig}): ${reason}`,
    );
  }
  if (text === undefined || text.trim() === "") {
    throw new Error(
      `${secret} or its key "${ref.key}" does not exist (kubeconfigSecretRef of ProviderConfig ${providerConfig}); create it with the existing cluster's kubeconfig`,
    );
  }
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(text);
  } catch {
    // The parser's message quotes the offending text, which may be key material: never pass it on.
    throw new Error(`key "${ref.key}" of ${secret} is not a kubeconfig (YAML that does not parse)`);
  }
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) {
    throw new Error(
      `the kubeconfig in key "${ref.key}" of ${secret} has no current-context naming a cluster with a server`,
    );
  }
  return { text, kubeConfig, server };
}

/** Turns `v1.33.3`, `v1.33.3+k3s1` or `1.33.3-gke.100` into `1.33.3`; undefined when there is no X.Y.Z. */
export function normaliseVersion(gitVersion: string): string | undefined {
  return /^v?(\d+\.\d+\.\d+)/.exec(gitVersion.trim())?.[1];
}

/**
 * Reads `settings.kubeconfigSecretRef` (`{ namespace, name, key? }`); throws a message naming the
 * ProviderConfig and what to write when it is missing or malformed.
 */
export function kubeconfigSecretRef(
  settings: JsonObject | undefined,
  providerConfig: string,
): KubeconfigSecretRef {
  const example = `settings: { kubeconfigSecretRef: { namespace: <ns>, name: <secret>, key: kubeconfig } }`;
  const ref = settings?.kubeconfigSecretRef;
  if (ref === undefined)
    throw new Error(`ProviderConfig ${providerConfig} has no settings.kubeconfigSecretRef; set ${example}`);
  if (typeof ref !== "object" || ref === null || Array.isArray(ref))
    throw new Error(
      `ProviderConfig ${providerConfig}: settings.kubeconfigSecretRef must be an object: ${example}`,
    );
  const { namespace, name, key } = ref as JsonObject;
  const field = (value: unknown, what: string) => {
    if (typeof value !== "string" || value.trim() === "")
      throw new Error(
        `ProviderConfig ${providerConfig}: settings.kubeconfigSecretRef.${what} must be a non-empty string: ${example}`,
      );
    return value;
  };
  return {
    namespace: field(namespace, "namespace"),
    name: field(name, "name"),
    key: key === undefined ? "kubeconfig" : field(key, "key"),
  };
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
  readonly #stateFile: string;
  readonly #probeTimeoutMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #bindings = new Map<string, Binding>();

  constructor(options: ExistingBackendOptions) {
    this.#readSecret = options.readSecret;
    this.#stateFile = options.stateFile;
    this.#probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger;
    this.#load();
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
    this.#bindings.set(target.uid, {
      uid: target.uid,
      namespace: target.namespace,
      name: target.name,
      providerConfig: target.providerConfig,
      secretRef: ref,
      server: access.server,
      version,
      boundAt: new Date(this.#clock.now()).toISOString(),
    });
    this.#save();
    this.#log.info("bound to existing cluster", {
      cluster: `${target.namespace}/${target.name}`,
      server: access.server,
      providerConfig: target.providerConfig,
    });
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const binding = this.#bindings.get(target.uid);
    if (!binding)
      throw new Error(`cannot update ${describe(target)}: it is not bound to an existing cluster`);
    const observation = await this.observe(target);
    const running = observation.exists ? observation.version : binding.version;
    if (normaliseVersion(running) === normaliseVersion(version)) return;
    throw new Error(
      `the engine does not upgrade clusters it does not own: ${describe(target)} is bound to an existing cluster running Kubernetes ${running}, not ${version}; upgrade that cluster yourself and list its new version in ProviderConfig ${binding.providerConfig}, or set spec.kubernetes.version to ${running}`,
    );
  }

  /** Releases the binding; the cluster itself is left as it is. */
  async delete(target: ClusterTarget): Promise<void> {
    if (!this.#bindings.delete(target.uid)) return;
    this.#save();
    this.#log.info("released existing cluster", { cluster: `${target.namespace}/${target.name}` });
  }

  async adminAccess(target: ClusterTarget): Promise<AdminAccess | undefined> {
    const binding = this.#bindings.get(target.uid);
    if (!binding) return undefined;
    const observation = await this.observe(target);
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
          : short(error);
      return { ok: false, reason };
    }
  }

  #load(): void {
    let text: string;
    try {
      text = readFileSync(this.#stateFile, "utf8");
    } catch {
      return; // no bindings yet
    }
    const parsed = JSON.parse(text) as { bindings?: Binding[] };
    for (const binding of parsed.bindings ?? []) this.#bindings.set(binding.uid, binding);
  }

  /** Writes every binding atomically. */
  #save(): void {
    writeFileAtomicallySync(
      this.#stateFile,
      JSON.stringify({ bindings: [...this.#bindings.values()] }, null, 2),
    );
  }
}

/** The first line of an error's message, at most 200 characters (a failed request's cause when it has one). */
function short(error: unknown): string {
  const cause = (error as { cause?: { message?: string; code?: string } })?.cause;
  const message = String((error as Error)?.message ?? error);
  const text = cause?.code ? `${message} (${cause.code})` : message;
  const line = text.split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function describe(target: ClusterTarget): string {
  return `cluster ${target.namespace}/${target.name}`;
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `existing` backend from `--backend-option`s: `probeTimeout` (how long `GET /version` may take,
 * e.g. `5s`, the default). Bindings live in `existing.json` in the state folder; kubeconfigs are read
 * through the context's Secret reader and never stored.
 */
export const createBackend: BackendFactory = (context: BackendContext) => {
  let probeTimeoutMs: number | undefined;
  if (context.options.probeTimeout !== undefined) {
    probeTimeoutMs = parseDuration(context.options.probeTimeout);
    if (probeTimeoutMs === undefined || probeTimeoutMs <= 0)
      throw new Error(
        `existing backend: probeTimeout "${context.options.probeTimeout}" is not a duration like 500ms or 5s`,
      );
  }
  mkdirSync(context.stateDirectory, { recursive: true });
  return new ExistingBackend({
    readSecret: context.readSecret,
    stateFile: join(context.stateDirectory, "existing.json"),
    ...(probeTimeoutMs === undefined ? {} : { probeTimeoutMs }),
    clock: context.clock,
    log: context.log.with({ backend: "existing" }),
  });
};
