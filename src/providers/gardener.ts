/** The `gardener` backend: each Cluster is a Gardener Shoot in a project of a garden, openMCP's production path. */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import type { BackendCondition, ClusterObservation, ClusterTarget } from "../api/backend.ts";
import {
  type AdminAccess,
  BACKEND_CONTRACT_VERSION,
  type BackendContext,
  type BackendFactory,
  type ClusterBackend,
  type ConfigOffer,
  type OidcTrust,
  type SecretReader,
} from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { RESOURCES } from "../api/constants.ts";
import { apiStatusOf, isNotFound } from "../api/error-message.ts";
import { silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { requestApiServer } from "../util/api-server-request.ts";
import { ClusterConfigError } from "./gardener-cluster-configs.ts";
import { type Garden, listShoots, type ShootRecord } from "./gardener-garden.ts";
import { gardenerPoolKind, type ProjectPlace } from "./gardener-pools.ts";
import { type GardenerSettings, gardenerSettings, templateCloudProfile } from "./gardener-settings.ts";
import {
  desiredShoot,
  GARDENER_KEYS,
  hibernationEnabled,
  hibernationImpossible,
  OPENMCP_GARDENER_CLUSTER_LABELS,
  type Shoot,
  type ShootPoolMember,
  shootChanges,
  shootName,
  shootObservation,
  shootServes,
} from "./gardener-shoot.ts";
import { cloudProfileVersions, shootTemplateTraits } from "./gardener-versions.ts";
import { authenticationConfig } from "./shared/authentication-config.ts";
import { remoteCallError } from "./shared/error-wording.ts";
import { type KubeconfigSecretRef, readKubeconfigSecret } from "./shared/kubeconfig-secret.ts";
import { RecordFile } from "./shared/record-file.ts";
import type { RemoteBackendOptions } from "./shared/remote-backend-options.ts";
import {
  againWhileChanged,
  apiClients,
  type OutOfDate,
  type RemoteObjectKind,
  RemoteObjects,
} from "./shared/remote-object.ts";
import { type PoolMemberTarget, RemoteObjectPools } from "./shared/remote-object-pools.ts";

const CORE = { group: "core.gardener.cloud", version: "v1beta1" } as const;
/** Lifetime of an admin kubeconfig the backend asks Gardener for (never stored; asked for again when needed). */
const ADMIN_KUBECONFIG_SECONDS = 3600;

/** Knobs of the gardener backend: those of every remote-object backend (the garden's kubeconfig is its only way to Gardener). */
export type GardenerBackendOptions = RemoteBackendOptions;

/**
 * A {@link ClusterBackend} that orders Shoots from Gardener. A ProviderConfig names a garden (a kubeconfig in a
 * Secret), a project, and a Shoot template; its profile offers the CloudProfile's supported and deprecated
 * versions.
 *
 * Flow: `create` records the Shoot's place, then creates the Shoot (or, when it exists already and is this
 * Cluster's, brings it in line); `observe` reads the Shoot and its status as gardenlet writes it; `update`
 * patches only what differs (never a full PUT, never a downgrade); `delete` annotates
 * `confirmation.gardener.cloud/deletion=true` and deletes; `adminAccess` asks the Shoot's `adminkubeconfig`
 * subresource for a short-lived kubeconfig; `trustOidcIssuers` writes a structured authentication ConfigMap
 * in the project namespace and references it from the Shoot's kube-apiserver settings.
 *
 * The Shoot carries the Cluster's `openmcp.cloud/project` and `openmcp.cloud/workspace` labels and its
 * `metadata.open-control-plane.io/*` labels and annotations; the Cluster's ClusterConfigs (`target.clusterConfigs`,
 * kind {@link GARDENER_CLUSTER_CONFIG_RESOURCE}) are applied last (see `applyClusterConfigs`), and the condition
 * `ShootClusterConfigs` says whether they can be.
 *
 * Guarantees: one Shoot per Cluster (a deterministic name, annotated with the Cluster's uid: a Shoot of
 * another Cluster is never adopted); Gardener's refusals are passed on with Gardener's message; no
 * kubeconfig, key or token in an observation, a log or an error. The garden's kubeconfig is read from its Secret
 * on every call and clients are made from what was read, so a rotated Secret is used from the next call on, and
 * a revoked credential is never kept.
 */
export class GardenerBackend implements ClusterBackend {
  readonly name = "gardener";
  readonly capabilities = { adminAccess: true, oidc: true } as const;
  /** The kind the names in a Cluster's `spec.clusterConfigs` refer to; the runtime reads them into `target.clusterConfigs`. */
  readonly clusterConfigResource = GARDENER_CLUSTER_CONFIG_RESOURCE;
  readonly #readSecret: SecretReader;
  readonly #clock: Clock;
  readonly #records: RecordFile<ShootRecord>;
  readonly #shoots: RemoteObjects<Shoot, ShootRecord, GardenerSettings, Garden>;
  /**
   * Warm pools (contract 1.5): a member is a Shoot made for its id; binding annotates it with the Cluster's uid, so
   * every call for that Cluster acts on the member's Shoot, also from an empty state folder (see gardener-pools.ts).
   */
  readonly pools: RemoteObjectPools<Shoot, ShootRecord, ProjectPlace, Garden>;
  /** Each served ProviderConfig's project, where pool members are looked for when no record says. */
  readonly #places = new Map<string, ProjectPlace>();
  /** The last offer read per ProviderConfig, for callers of the synchronous `supportedVersions`. */
  readonly #offers = new Map<string, ConfigOffer>();
  /** Each project's namespace as last read, by garden Secret and project (see {@link projectKey}). */
  readonly #projectNamespaces = new Map<string, string>();

  constructor(options: GardenerBackendOptions) {
    this.#readSecret = options.readSecret;
    this.#clock = options.clock ?? systemClock;
    this.#records = new RecordFile<ShootRecord>(options.stateFile, "shoots");
    const log = options.log ?? silentLogger;
    this.#shoots = new RemoteObjects(this.#shootKind(), this.#records, log);
    const kind = gardenerPoolKind({
      shoots: this.#shoots,
      garden: (ref, providerConfig) => this.#garden(ref, providerConfig),
      projectNamespace: async (garden, settings, providerConfig) =>
        this.#projectNamespaces.get(projectKey(settings)) ??
        (await this.#projectNamespace(garden, settings, providerConfig, { missing: "undefined" })),
      places: () => [...this.#places.values()],
    });
    this.pools = new RemoteObjectPools(kind, this.#records, log);
  }

  /** The versions last read from the config's CloudProfile (see {@link readOffer}); none before the first read. */
  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    return this.#offers.get(config.metadata.name ?? "")?.versions ?? [];
  }

  traits(config: ProviderConfig): readonly string[] {
    try {
      const settings = gardenerSettings(config.spec.settings, config.metadata.name ?? "");
      return [...new Set([...shootTemplateTraits(settings.template), ...(config.spec.traits ?? [])])];
    } catch {
      return config.spec.traits ?? [];
    }
  }

  /**
   * Reads the garden, the project and the template's CloudProfile: the versions it classifies supported or
   * deprecated (now), newest first. Throws with what is wrong: settings, Secret, garden, project, CloudProfile.
   */
  async readOffer(config: ProviderConfig): Promise<ConfigOffer> {
    const name = config.metadata.name ?? "";
    try {
      return await this.#readOffer(config, name);
    } catch (error) {
      this.#places.delete(name); // not served now: its project is not where pools are looked for
      throw error;
    }
  }

  async #readOffer(config: ProviderConfig, name: string): Promise<ConfigOffer> {
    const settings = gardenerSettings(config.spec.settings, name);
    const garden = await this.#garden(settings.garden, name);
    await this.#projectNamespace(garden, settings, name);
    const cloudProfile = templateCloudProfile(settings);
    let profile: unknown;
    try {
      profile = await garden.custom.getClusterCustomObject({
        ...CORE,
        plural: "cloudprofiles",
        name: cloudProfile,
      });
    } catch (error) {
      if (isNotFound(error))
        throw new Error(
          `CloudProfile ${cloudProfile} does not exist in the garden at ${garden.access.server} (settings.shootTemplate.spec.cloudProfile of ProviderConfig ${name})`,
        );
      throw garden.error(`reading CloudProfile ${cloudProfile}`, error);
    }
    const offer: ConfigOffer = {
      versions: cloudProfileVersions(profile, this.#clock.now()),
      traits: this.traits(config),
    };
    this.#offers.set(name, offer);
    return offer;
  }

  // Every call about a Cluster first finds its Shoot in the garden when no record says where (see
  // `RemoteObjectPools.resolve`): a bound pool member's Shoot has another name than the Cluster's would.

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    // Only reads: a garden that does not answer now is reported by the observation itself.
    await this.pools.resolve(target).catch(() => undefined);
    return this.#shoots.observe(target);
  }

  /** Orders the Cluster's Shoot; for a Cluster bound to a pool member, makes nothing and brings the member's Shoot in line. */
  async create(target: ClusterTarget, version: string): Promise<void> {
    await this.pools.resolve(target);
    return this.#shoots.create(target, version);
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    await this.pools.resolve(target);
    return this.#shoots.update(target, version);
  }

  /** Confirms and deletes the Shoot (a bound pool member's too); done once Gardener has removed it (observe then says it is gone). */
  async delete(target: ClusterTarget): Promise<void> {
    await this.pools.resolve(target);
    await this.#shoots.delete(target);
  }

  /**
   * Its record of the Shoot (contract 1.5), for the engine the Cluster moves to; the Shoot itself stays. A pool
   * member's Shoot names the Cluster it serves, so the other engine finds it also without the record.
   */
  async exportCluster(target: ClusterTarget): Promise<Readonly<Record<string, string>>> {
    await this.pools.resolve(target);
    return this.#shoots.exportRecord(target);
  }

  /** Takes over the record another instance kept (contract 1.5); a record this instance holds stays. */
  async importCluster(target: ClusterTarget, state: Readonly<Record<string, string>>): Promise<void> {
    this.#shoots.importRecord(target, state);
  }

  /** A short-lived kubeconfig from the Shoot's `adminkubeconfig` subresource, once the Shoot is ready. */
  async adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined> {
    await this.pools.resolve(target);
    const ready = await this.#shoots.ready(target, observed);
    if (!ready) return undefined;
    const { record, api: garden } = ready;
    const path = `/apis/core.gardener.cloud/v1beta1/namespaces/${record.namespace}/shoots/${record.shoot}/adminkubeconfig`;
    const body = {
      apiVersion: "authentication.gardener.cloud/v1alpha1",
      kind: "AdminKubeconfigRequest",
      spec: { expirationSeconds: ADMIN_KUBECONFIG_SECONDS },
    };
    const answer = (await postJson(garden.access.kubeConfig, path, body)) as {
      status?: { kubeconfig?: string };
    };
    const kubeconfig = answer.status?.kubeconfig;
    if (!kubeconfig)
      throw new Error(`Gardener issued no admin kubeconfig for Shoot ${record.namespace}/${record.shoot}`);
    return { kubeconfig: Buffer.from(kubeconfig, "base64").toString("utf8") };
  }

  /**
   * Writes the structured authentication configuration (one JWT authenticator per issuer, as on `local`) into
   * ConfigMap `<shoot>-authentication` in the project namespace, and points the Shoot's
   * `spec.kubernetes.kubeAPIServer.structuredAuthentication.configMapName` at it (once; later changes are in
   * the ConfigMap only). A private CA for the issuers comes from `settings.oidcCertificateAuthority` (PEM).
   */
  async trustOidcIssuers(target: ClusterTarget, issuers: readonly OidcTrust[]): Promise<void> {
    const { record, api: garden, object: shoot } = await this.#existingShoot(target);
    const ca = target.settings?.oidcCertificateAuthority;
    const name = `${record.shoot}-authentication`;
    const data = { "config.yaml": authenticationConfig(issuers, typeof ca === "string" ? ca : undefined) };
    try {
      const stored = await garden.core.readNamespacedConfigMap({ namespace: record.namespace, name });
      if (stored.data?.["config.yaml"] !== data["config.yaml"])
        await garden.core.replaceNamespacedConfigMap({
          namespace: record.namespace,
          name,
          body: { ...stored, data },
        });
    } catch (error) {
      if (!isNotFound(error)) throw garden.error(`writing ConfigMap ${record.namespace}/${name}`, error);
      await garden.core.createNamespacedConfigMap({
        namespace: record.namespace,
        body: { metadata: { name }, data },
      });
    }
    const apiServer = (shoot.spec.kubernetes as JsonObject | undefined)?.kubeAPIServer as
      | JsonObject
      | undefined;
    const current = (apiServer?.structuredAuthentication as JsonObject | undefined)?.configMapName;
    if (current !== name) {
      await this.#shoots.patch(garden, shoot, {
        spec: { kubernetes: { kubeAPIServer: { structuredAuthentication: { configMapName: name } } } },
      });
    }
  }

  /**
   * Puts the Shoot to sleep (contract 1.6) as Gardener does it: a merge patch `spec.hibernation.enabled: true`
   * (guarded by the resourceVersion read; `spec.hibernation.schedules` a person set stay). gardenlet then scales the
   * control plane and the workers to zero, keeping etcd's volume, the CAs and the advertised address, and sets
   * `status.hibernated`; `observe` reports `hibernating`, then `hibernated`. Idempotent. Throws while the Shoot is
   * being created or deleted, has failed, or Gardener's `HibernationPossible` constraint is False (with its message).
   */
  async hibernate(target: ClusterTarget): Promise<void> {
    // gardenlet writes the status while it works: a patch refused for it is made again on a fresh read.
    await againWhileChanged(() => this.#hibernate(target));
  }

  async #hibernate(target: ClusterTarget): Promise<void> {
    const { api: garden, object: shoot } = await this.#existingShoot(target);
    if (hibernationEnabled(shoot)) return;
    const now = shootObservation(shoot);
    if (now.phase === "deleting" || now.phase === "provisioning" || now.phase === "failed")
      throw new Error(
        `gardener backend: Shoot ${shoot.metadata.namespace}/${shoot.metadata.name} cannot be hibernated while it is ${now.phase}${now.message ? ` (${now.message})` : ""}`,
      );
    const impossible = hibernationImpossible(shoot);
    if (impossible) throw new Error(impossible);
    await this.#shoots.patch(garden, shoot, { spec: { hibernation: { enabled: true } } });
  }

  /**
   * Wakes the Shoot (contract 1.6): `spec.hibernation.enabled: false` (the same guarded merge patch; schedules stay).
   * gardenlet starts the control plane on the same etcd data with the same CAs and address and clears
   * `status.hibernated`; `observe` reports `waking`, then `ready` at the same endpoint. Idempotent; nothing for a
   * Shoot being deleted.
   */
  async wake(target: ClusterTarget): Promise<void> {
    await againWhileChanged(() => this.#wake(target));
  }

  async #wake(target: ClusterTarget): Promise<void> {
    const { api: garden, object: shoot } = await this.#existingShoot(target);
    if (!hibernationEnabled(shoot) || shoot.metadata.deletionTimestamp) return;
    await this.#shoots.patch(garden, shoot, { spec: { hibernation: { enabled: false } } });
  }

  /** The Cluster's Shoot as stored, with its garden; throws when there is none. */
  async #existingShoot(target: ClusterTarget) {
    await this.pools.resolve(target);
    const place = this.#shoots.place(target);
    if (!place) throw new Error(`gardener backend: cluster ${target.namespace}/${target.name} has no Shoot`);
    const found = await this.#shoots.stored(target);
    if (!found)
      throw new Error(
        `gardener backend: Shoot ${place.namespace}/${place.shoot} of cluster ${target.namespace}/${target.name} does not exist`,
      );
    return found;
  }

  /** Shoots this backend has records of (ordered, bound or found, and not seen gone), for tests and leak checks. */
  get shootCount(): number {
    return new Set(this.#records.values().map((r) => `${r.namespace}/${r.shoot}`)).size;
  }

  /** The pool member whose Shoot serves `target`: a member's own (being made), or the one a Cluster is bound to. */
  #memberOf(target: ClusterTarget): ShootPoolMember | undefined {
    return (target as Partial<PoolMemberTarget>).poolMember ?? this.#records.get(target.uid)?.member;
  }

  /** Shoots as a remote-object recipe configuration: what is Gardener's own. */
  #shootKind(): RemoteObjectKind<Shoot, ShootRecord, GardenerSettings, Garden> {
    const record = (
      target: ClusterTarget,
      settings: GardenerSettings,
      namespace: string,
      shoot: string,
      version: string,
    ): ShootRecord => {
      const member = this.#memberOf(target);
      return {
        uid: target.uid,
        cluster: `${target.namespace}/${target.name}`,
        providerConfig: target.providerConfig,
        garden: settings.garden,
        namespace,
        shoot,
        version,
        ...(member ? { member } : {}),
      };
    };
    return {
      noun: "Shoot",
      made: "ordered",
      logKey: "shoot",
      resource: { ...CORE, plural: "shoots" },
      settings: (target) => gardenerSettings(target.settings, target.providerConfig),
      open: async (settings, providerConfig) => {
        const api = await this.#garden(settings.garden, providerConfig);
        return { api, namespace: await this.#projectNamespace(api, settings, providerConfig) };
      },
      reopen: (record) => this.#garden(record.garden, record.providerConfig),
      record,
      // A lost state file (an engine Pod rescheduled, or its standby taking over, with a state folder of its
      // own): where the settings and the deterministic name say the Shoot is, in the project's namespace as last
      // read (each ProviderConfig's offer reads it), else Gardener's default `garden-<project>`. The Shoot is
      // still taken only when annotated with the Cluster's uid.
      derivedRecord: (target) => {
        try {
          const settings = gardenerSettings(target.settings, target.providerConfig);
          const namespace = this.#projectNamespaces.get(projectKey(settings)) ?? `garden-${settings.project}`;
          return record(target, settings, namespace, shootName(target), "");
        } catch {
          return undefined;
        }
      },
      nameOf: (record) => record.shoot,
      desired: (target, settings, namespace, version) =>
        desiredShoot(target, settings, namespace, version, this.#memberOf(target)),
      runningVersion: (shoot) => shoot.spec.kubernetes?.version,
      changes: shootChanges,
      changedFields: (changes) => Object.keys(changes),
      ownedBy: shootServes,
      // openMCP's Gardener provider's Shoot of this Cluster, by the labels it puts on it.
      takenOver: async (garden, namespace, target) => {
        for (const keys of OPENMCP_GARDENER_CLUSTER_LABELS) {
          const labels = { [keys.name]: target.name, [keys.namespace]: target.namespace };
          const found = (await listShoots(garden, namespace, labels)).find((shoot) =>
            shootServes(shoot, target),
          );
          if (found) return found;
        }
        return undefined;
      },
      conflict,
      observation: (shoot, _record, target, outOfDate) => observeShoot(shoot, target, outOfDate),
      beforeDelete: async (shoot, patch) => {
        if (shoot.metadata.annotations?.[GARDENER_KEYS.deletionConfirmation] !== "true")
          await patch({ metadata: { annotations: { [GARDENER_KEYS.deletionConfirmation]: "true" } } });
      },
    };
  }

  /** The project's namespace; throws when the project does not exist or has none yet (or says undefined, when asked). */
  async #projectNamespace(
    garden: Garden,
    settings: GardenerSettings,
    providerConfig: string,
  ): Promise<string>;
  async #projectNamespace(
    garden: Garden,
    settings: GardenerSettings,
    providerConfig: string,
    options: { readonly missing: "undefined" },
  ): Promise<string | undefined>;
  async #projectNamespace(
    garden: Garden,
    settings: GardenerSettings,
    providerConfig: string,
    options?: { readonly missing: "undefined" },
  ): Promise<string | undefined> {
    let project: { spec?: { namespace?: string } };
    try {
      project = (await garden.custom.getClusterCustomObject({
        ...CORE,
        plural: "projects",
        name: settings.project,
      })) as typeof project;
    } catch (error) {
      if (isNotFound(error) && options) return undefined;
      if (isNotFound(error))
        throw new Error(
          `Gardener project ${settings.project} does not exist in the garden at ${garden.access.server} (settings.project of ProviderConfig ${providerConfig})`,
        );
      throw garden.error(`reading project ${settings.project}`, error);
    }
    const namespace = project.spec?.namespace;
    if (!namespace && options) return undefined;
    if (!namespace)
      throw new Error(
        `Gardener project ${settings.project} has no namespace yet; wait for Gardener to make it`,
      );
    this.#projectNamespaces.set(projectKey(settings), namespace);
    this.#places.set(providerConfig, { garden: settings.garden, namespace, providerConfig });
    return namespace;
  }

  /** The garden `ref` names, read anew (a rotated Secret is used from the next call on). */
  async #garden(ref: KubeconfigSecretRef, providerConfig: string): Promise<Garden> {
    const access = await readKubeconfigSecret(this.#readSecret, ref, providerConfig);
    return {
      access,
      ...apiClients(access.kubeConfig),
      error: (what, error) => gardenError(ref, access.server, what, error),
    };
  }
}

/** A project of a garden, as a key: the garden's Secret and the project's name. */
function projectKey(settings: GardenerSettings): string {
  return `${settings.garden.namespace}/${settings.garden.name}/${settings.project}`;
}

/**
 * What a Shoot says (see `shootObservation`), with the `ShootClusterConfigs` condition and whether it is out of date
 * (not while it is being deleted; nor when a ClusterConfig cannot be applied: the condition says why, and an update
 * could not help).
 */
function observeShoot(shoot: Shoot, target: ClusterTarget, outOfDate: OutOfDate): ClusterObservation {
  const observation = shootObservation(shoot);
  if (shoot.metadata.deletionTimestamp) return observation;
  let configs = clusterConfigsCondition(target);
  const differs = outOfDate((error) => {
    if (error instanceof ClusterConfigError) configs = clusterConfigsCondition(target, error);
  });
  return {
    ...observation,
    conditions: [...(observation.conditions ?? []), configs],
    ...(differs ? { outOfDate: true } : {}),
  };
}

/** The kind of the objects a Cluster names in `spec.clusterConfigs` for this backend: openMCP's Gardener ClusterConfig. */
export const GARDENER_CLUSTER_CONFIG_RESOURCE = RESOURCES.ClusterConfig;

/**
 * `ShootClusterConfigs`: True when the Cluster's ClusterConfigs (if any) apply to its Shoot; False with reason
 * `ClusterConfigNotFound` or `InvalidClusterConfig` and a message naming the ClusterConfig when they do not.
 */
function clusterConfigsCondition(target: ClusterTarget, error?: ClusterConfigError): BackendCondition {
  const type = "ShootClusterConfigs";
  if (error)
    return {
      type,
      status: "False",
      reason: error.kind === "NotFound" ? "ClusterConfigNotFound" : "InvalidClusterConfig",
      message: error.message,
    };
  const names = (target.clusterConfigs ?? []).map((c) => c.name);
  return {
    type,
    status: "True",
    reason: "Applied",
    message:
      names.length === 0
        ? "the Cluster names no ClusterConfigs"
        : `ClusterConfigs ${names.join(", ")} apply to the Shoot`,
  };
}

function conflict(shoot: Shoot, target: ClusterTarget): Error {
  const owner = shoot.metadata.annotations?.[GARDENER_KEYS.clusterAnnotation];
  const whose = owner ? `belongs to Cluster ${owner}` : "exists and was not made by the engine";
  return new Error(
    `Shoot ${shoot.metadata.namespace}/${shoot.metadata.name} ${whose}; give Cluster ${target.namespace}/${target.name} another Shoot name with label ${GARDENER_KEYS.shootNameLabel}`,
  );
}

/**
 * An error of a garden call, with Gardener's own message (its validation and admission say what is wrong); a 401
 * names the Secret whose credential the garden no longer takes (revoked or expired: the next call reads it again).
 */
function gardenError(secret: KubeconfigSecretRef, server: string, what: string, error: unknown): Error {
  if (apiStatusOf(error)?.code === 401) {
    return new Error(
      `the garden at ${server} refused the credential of the kubeconfig in Secret ${secret.namespace}/${secret.name} while ${what} (401 Unauthorized): it was revoked or has expired; put a valid kubeconfig into the Secret, the next call reads it`,
      { cause: error },
    );
  }
  return remoteCallError({ refuser: "Gardener", place: `garden at ${server}` }, what, error);
}

/** POSTs JSON to a path of the API server `kubeConfig` names (for subresources the generated clients lack). */
async function postJson(kubeConfig: KubeConfig, path: string, body: object): Promise<unknown> {
  const answer = await requestApiServer(kubeConfig, {
    method: "POST",
    path,
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
    timeoutMs: 15_000,
  });
  if (answer.status < 300) return JSON.parse(answer.text);
  let message = answer.text;
  try {
    message = (JSON.parse(answer.text) as { message?: string }).message ?? answer.text;
  } catch {}
  throw new Error(`Gardener refused POST ${path}: ${answer.status} ${message.slice(0, 300)}`);
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/** The `gardener` backend. Records live in `gardener.json` in the state folder; kubeconfigs are read through the context's Secret reader and never stored. */
export const createBackend: BackendFactory = (context: BackendContext) => {
  mkdirSync(context.stateDirectory, { recursive: true });
  return new GardenerBackend({
    readSecret: context.readSecret,
    stateFile: join(context.stateDirectory, "gardener.json"),
    clock: context.clock,
    log: context.log.with({ backend: "gardener" }),
  });
};
