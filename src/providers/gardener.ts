/** The `gardener` backend: each Cluster is a Gardener Shoot in a project of a garden, openMCP's production path. */

import { mkdirSync, readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { BackendCondition, ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  ConfigOffer,
  OidcTrust,
  SecretReader,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { RESOURCES } from "../api/constants.ts";
import { apiStatusOf, errorMessage, isNotFound } from "../api/error-message.ts";
import { type Logger, silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { writeFileAtomicallySync } from "../util/atomic-file.ts";
import { type KubeconfigAccess, type KubeconfigSecretRef, readKubeconfigSecret } from "./existing.ts";
import { ClusterConfigError } from "./gardener-cluster-configs.ts";
import { type GardenerSettings, gardenerSettings, templateCloudProfile } from "./gardener-settings.ts";
import {
  desiredShoot,
  GARDENER_KEYS,
  patchWorthSending,
  type SentPatch,
  type Shoot,
  shootChanges,
  shootObservation,
} from "./gardener-shoot.ts";
import { cloudProfileVersions, shootTemplateTraits } from "./gardener-versions.ts";
import { authenticationConfig } from "./local-authentication.ts";

const CORE = { group: "core.gardener.cloud", version: "v1beta1" } as const;
/** Lifetime of an admin kubeconfig the backend asks Gardener for (never stored; asked for again when needed). */
const ADMIN_KUBECONFIG_SECONDS = 3600;

/** Knobs of the gardener backend. */
export interface GardenerBackendOptions {
  /** Reads the Secret holding the garden's kubeconfig (the backend's only way to it). */
  readonly readSecret: SecretReader;
  /** JSON file recording which Shoot each Cluster has (so deletion works when its ProviderConfig is gone). */
  readonly stateFile: string;
  readonly clock?: Clock;
  readonly log?: Logger;
}

/** What the backend remembers of one Cluster: where its Shoot is. */
interface ShootRecord {
  readonly uid: string;
  readonly cluster: string;
  readonly providerConfig: string;
  readonly garden: KubeconfigSecretRef;
  readonly namespace: string;
  readonly shoot: string;
  /** The version ordered, reported while the garden cannot be asked. */
  readonly version: string;
  /** Set once deletion was ordered: the record goes when the Shoot is seen gone. */
  readonly deleting?: boolean;
}

/** A garden: its kubeconfig and clients. */
interface Garden {
  /** The Secret the kubeconfig was read from (for messages). */
  readonly secret: KubeconfigSecretRef;
  readonly access: KubeconfigAccess;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
}

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
  readonly #stateFile: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #records = new Map<string, ShootRecord>();
  /** The last patch sent per Cluster uid, and the Shoot generation it led to (see {@link #outOfDate}). */
  readonly #lastPatches = new Map<string, SentPatch & { readonly warned?: boolean }>();
  /** The last offer read per ProviderConfig, for callers of the synchronous `supportedVersions`. */
  readonly #offers = new Map<string, ConfigOffer>();

  constructor(options: GardenerBackendOptions) {
    this.#readSecret = options.readSecret;
    this.#stateFile = options.stateFile;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger;
    this.#load();
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
      throw gardenError(garden, `reading CloudProfile ${cloudProfile}`, error);
    }
    const offer: ConfigOffer = {
      versions: cloudProfileVersions(profile, this.#clock.now()),
      traits: this.traits(config),
    };
    this.#offers.set(name, offer);
    return offer;
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const record = this.#records.get(target.uid);
    if (!record) return { exists: false };
    let garden: Garden;
    try {
      garden = await this.#garden(record.garden, record.providerConfig);
    } catch (error) {
      return {
        exists: true,
        phase: "provisioning",
        version: record.version,
        message: (error as Error).message,
      };
    }
    let shoot: Shoot | undefined;
    try {
      shoot = await this.#readShoot(garden, record.namespace, record.shoot);
    } catch (error) {
      return {
        exists: true,
        phase: "provisioning",
        version: record.version,
        message: (error as Error).message, // #readShoot says what failed
      };
    }
    if (!shoot || !ownedBy(shoot, target.uid)) {
      if (record.deleting) this.#forget(target.uid); // bookkeeping only: the Shoot is gone for good
      return { exists: false };
    }
    const observation = shootObservation(shoot);
    if (shoot.metadata.deletionTimestamp) return observation;
    const { outOfDate, configs } = this.#compare(target, record, shoot);
    return {
      ...observation,
      conditions: [...(observation.conditions ?? []), configs],
      ...(outOfDate ? { outOfDate: true } : {}),
    };
  }

  /**
   * Whether the Shoot differs from what the Cluster and its ProviderConfig ask now (template, copied labels and
   * annotations, ClusterConfigs) at the version it has, so that an update would change it, and the
   * `ShootClusterConfigs` condition. Not out of date when the very patch was applied already and Gardener has taken
   * it in (its generation moved on) yet the difference stays: then Gardener changes it back, and patching again
   * would only loop; nor when a ClusterConfig cannot be applied (the condition says why; an update could not help).
   */
  #compare(
    target: ClusterTarget,
    record: ShootRecord,
    shoot: Shoot,
  ): { readonly outOfDate: boolean; readonly configs: BackendCondition } {
    let changes: JsonObject | undefined;
    let configs = clusterConfigsCondition(target);
    try {
      const settings = gardenerSettings(target.settings, target.providerConfig);
      const version = shoot.spec.kubernetes?.version ?? record.version;
      changes = shootChanges(shoot, desiredShoot(target, settings, record.namespace, version));
    } catch (error) {
      if (error instanceof ClusterConfigError) configs = clusterConfigsCondition(target, error);
      // else no settings (the ProviderConfig is gone) or nothing an update could do
      return { outOfDate: false, configs };
    }
    if (!changes) return { outOfDate: false, configs };
    const last = this.#lastPatches.get(target.uid);
    if (patchWorthSending(changes, last, shoot.metadata.generation ?? 0)) return { outOfDate: true, configs };
    if (last && !last.warned) {
      this.#lastPatches.set(target.uid, { ...last, warned: true }); // said once, not on every look
      this.#log.warn("Shoot keeps differing from its template after it was patched; not patching again", {
        shoot: `${record.namespace}/${record.shoot}`,
        fields: Object.keys(changes).join(","),
      });
    }
    return { outOfDate: false, configs };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    const settings = gardenerSettings(target.settings, target.providerConfig);
    const garden = await this.#garden(settings.garden, target.providerConfig);
    const namespace = await this.#projectNamespace(garden, settings, target.providerConfig);
    const desired = desiredShoot(target, settings, namespace, version);
    const name = desired.metadata.name;
    const existing = await this.#readShoot(garden, namespace, name);
    if (existing && !ownedBy(existing, target.uid)) throw conflict(existing, target);
    // Recorded before the Shoot is ordered: an engine killed in between finds it on restart (same name).
    this.#remember({
      uid: target.uid,
      cluster: `${target.namespace}/${target.name}`,
      providerConfig: target.providerConfig,
      garden: settings.garden,
      namespace,
      shoot: name,
      version,
    });
    // A Shoot that exists keeps its version here (changing versions is update's job, and never downwards).
    const running = existing?.spec.kubernetes?.version;
    if (existing)
      return this.#bringInLine(
        garden,
        existing,
        running ? desiredShoot(target, settings, namespace, running) : desired,
      );
    try {
      await garden.custom.createNamespacedCustomObject({
        ...CORE,
        namespace,
        plural: "shoots",
        body: desired,
      });
      this.#log.info("Shoot created", {
        cluster: `${target.namespace}/${target.name}`,
        shoot: `${namespace}/${name}`,
        version,
      });
    } catch (error) {
      const code = apiStatusOf(error)?.code ?? 0;
      // Refused (validation, admission): no Shoot was made, so there is nothing to remember.
      if (code >= 400 && code < 500 && code !== 409) this.#forget(target.uid);
      if (code !== 409) throw gardenError(garden, `creating Shoot ${namespace}/${name}`, error);
      const raced = await this.#readShoot(garden, namespace, name);
      if (raced && !ownedBy(raced, target.uid)) throw conflict(raced, target);
    }
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const record = this.#records.get(target.uid);
    if (!record)
      throw new Error(
        `cannot update cluster ${target.namespace}/${target.name}: no Shoot was ordered for it`,
      );
    const settings = gardenerSettings(target.settings, target.providerConfig);
    const garden = await this.#garden(settings.garden, target.providerConfig);
    const shoot = await this.#readShoot(garden, record.namespace, record.shoot);
    if (!shoot || !ownedBy(shoot, target.uid))
      throw new Error(
        `cannot update cluster ${target.namespace}/${target.name}: Shoot ${record.namespace}/${record.shoot} is gone`,
      );
    await this.#bringInLine(garden, shoot, desiredShoot(target, settings, record.namespace, version));
    this.#remember({ ...record, version });
  }

  /** Confirms and deletes the Shoot; done once Gardener has removed it (observe then says it is gone). */
  async delete(target: ClusterTarget): Promise<void> {
    const record = this.#records.get(target.uid);
    if (!record) return;
    let garden: Garden;
    try {
      garden = await this.#garden(record.garden, record.providerConfig);
    } catch (error) {
      throw new Error(`cannot delete Shoot ${record.namespace}/${record.shoot}: ${(error as Error).message}`);
    }
    const shoot = await this.#readShoot(garden, record.namespace, record.shoot);
    if (!shoot || !ownedBy(shoot, target.uid)) {
      this.#forget(target.uid);
      return;
    }
    const where = `Shoot ${record.namespace}/${record.shoot}`;
    this.#remember({ ...record, deleting: true });
    try {
      if (shoot.metadata.annotations?.[GARDENER_KEYS.deletionConfirmation] !== "true") {
        // Unguarded: the annotation overwrites nothing read, and the gardenlet writes the Shoot at any moment.
        await this.#patch(
          garden,
          shoot,
          { metadata: { annotations: { [GARDENER_KEYS.deletionConfirmation]: "true" } } },
          { guarded: false },
        );
      }
      if (!shoot.metadata.deletionTimestamp) {
        await garden.custom.deleteNamespacedCustomObject({
          ...CORE,
          namespace: record.namespace,
          plural: "shoots",
          name: record.shoot,
        });
        this.#log.info("Shoot deletion ordered", {
          cluster: record.cluster,
          shoot: `${record.namespace}/${record.shoot}`,
        });
      }
    } catch (error) {
      if (isNotFound(error)) return this.#forget(target.uid);
      throw gardenError(garden, `deleting ${where}`, error);
    }
  }

  async adminAccess(target: ClusterTarget): Promise<AdminAccess | undefined> {
    const record = this.#records.get(target.uid);
    if (!record) return undefined;
    const observation = await this.observe(target);
    if (!observation.exists || observation.phase !== "ready") return undefined;
    const garden = await this.#garden(record.garden, record.providerConfig);
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
    const record = this.#records.get(target.uid);
    if (!record) throw new Error(`gardener backend: cluster ${target.namespace}/${target.name} has no Shoot`);
    const garden = await this.#garden(record.garden, record.providerConfig);
    const shoot = await this.#readShoot(garden, record.namespace, record.shoot);
    if (!shoot || !ownedBy(shoot, target.uid))
      throw new Error(
        `gardener backend: Shoot ${record.namespace}/${record.shoot} of cluster ${target.namespace}/${target.name} does not exist`,
      );
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
      if (!isNotFound(error))
        throw gardenError(garden, `writing ConfigMap ${record.namespace}/${name}`, error);
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
      await this.#patch(garden, shoot, {
        spec: { kubernetes: { kubeAPIServer: { structuredAuthentication: { configMapName: name } } } },
      });
    }
  }

  /** Shoots this backend ordered and has not seen gone, for tests and leak checks. */
  get shootCount(): number {
    return this.#records.size;
  }

  async #bringInLine(garden: Garden, stored: Shoot, desired: Shoot): Promise<void> {
    const changes = shootChanges(stored, desired);
    if (!changes) return;
    const patched = await this.#patch(garden, stored, changes);
    const uid = stored.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation] ?? "";
    this.#lastPatches.set(uid, {
      changes: JSON.stringify(changes),
      generation: patched.metadata.generation ?? 0,
    });
    this.#log.info("Shoot updated", {
      shoot: `${stored.metadata.namespace}/${stored.metadata.name}`,
      fields: Object.keys(changes).join(","),
    });
  }

  /** A JSON merge patch of exactly `changes`, guarded by the resourceVersion read (a conflict is retried by the engine). */
  /**
   * A merge patch, guarded by default with the resourceVersion read (changes computed from what was read must not
   * land on a Shoot that changed since).
   */
  async #patch(
    garden: Garden,
    shoot: Shoot,
    changes: JsonObject,
    { guarded = true }: { readonly guarded?: boolean } = {},
  ): Promise<Shoot> {
    const namespace = shoot.metadata.namespace ?? "";
    const metadata = {
      ...((changes.metadata as JsonObject | undefined) ?? {}),
      ...(guarded ? { resourceVersion: shoot.metadata.resourceVersion ?? null } : {}),
    };
    try {
      return (await garden.custom.patchNamespacedCustomObject(
        { ...CORE, namespace, plural: "shoots", name: shoot.metadata.name, body: { ...changes, metadata } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      )) as Shoot;
    } catch (error) {
      throw gardenError(garden, `updating Shoot ${namespace}/${shoot.metadata.name}`, error);
    }
  }

  async #readShoot(garden: Garden, namespace: string, name: string): Promise<Shoot | undefined> {
    try {
      return (await garden.custom.getNamespacedCustomObject({
        ...CORE,
        namespace,
        plural: "shoots",
        name,
      })) as Shoot;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw gardenError(garden, `reading Shoot ${namespace}/${name}`, error);
    }
  }

  /** The project's namespace; throws when the project does not exist or has none yet. */
  async #projectNamespace(
    garden: Garden,
    settings: GardenerSettings,
    providerConfig: string,
  ): Promise<string> {
    let project: { spec?: { namespace?: string } };
    try {
      project = (await garden.custom.getClusterCustomObject({
        ...CORE,
        plural: "projects",
        name: settings.project,
      })) as typeof project;
    } catch (error) {
      if (isNotFound(error))
        throw new Error(
          `Gardener project ${settings.project} does not exist in the garden at ${garden.access.server} (settings.project of ProviderConfig ${providerConfig})`,
        );
      throw gardenError(garden, `reading project ${settings.project}`, error);
    }
    const namespace = project.spec?.namespace;
    if (!namespace)
      throw new Error(
        `Gardener project ${settings.project} has no namespace yet; wait for Gardener to make it`,
      );
    return namespace;
  }

  async #garden(ref: KubeconfigSecretRef, providerConfig: string): Promise<Garden> {
    const access = await readKubeconfigSecret(this.#readSecret, ref, providerConfig);
    return {
      secret: ref,
      access,
      custom: access.kubeConfig.makeApiClient(CustomObjectsApi),
      core: access.kubeConfig.makeApiClient(CoreV1Api),
    };
  }

  #remember(record: ShootRecord): void {
    const known = this.#records.get(record.uid);
    if (known && JSON.stringify(known) === JSON.stringify(record)) return;
    this.#records.set(record.uid, record);
    this.#save();
  }

  #forget(uid: string): void {
    if (this.#records.delete(uid)) this.#save();
  }

  #load(): void {
    let text: string;
    try {
      text = readFileSync(this.#stateFile, "utf8");
    } catch {
      return; // nothing ordered yet
    }
    for (const record of (JSON.parse(text) as { shoots?: ShootRecord[] }).shoots ?? [])
      this.#records.set(record.uid, record);
  }

  /** Writes every record atomically. */
  #save(): void {
    writeFileAtomicallySync(
      this.#stateFile,
      JSON.stringify({ shoots: [...this.#records.values()] }, null, 2),
    );
  }
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

/** Whether `shoot` was made for the Cluster with `uid`. */
function ownedBy(shoot: Shoot, uid: string): boolean {
  return shoot.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation] === uid;
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
function gardenError(garden: Garden, what: string, error: unknown): Error {
  const status = apiStatusOf(error);
  if (status?.code === 401) {
    const secret = `${garden.secret.namespace}/${garden.secret.name}`;
    return new Error(
      `the garden at ${garden.access.server} refused the credential of the kubeconfig in Secret ${secret} while ${what} (401 Unauthorized): it was revoked or has expired; put a valid kubeconfig into the Secret, the next call reads it`,
      { cause: error },
    );
  }
  if (status?.message) return new Error(`Gardener refused ${what}: ${status.message}`, { cause: error });
  if (status) return new Error(`Gardener refused ${what}: HTTP ${status.code}`, { cause: error });
  return new Error(`garden at ${garden.access.server} unreachable while ${what}: ${short(error)}`, {
    cause: error,
  });
}

function short(error: unknown): string {
  const cause = (error as { cause?: { code?: string } })?.cause;
  const line = errorMessage(error).split("\n")[0] ?? "";
  return `${line.length > 200 ? `${line.slice(0, 200)}…` : line}${cause?.code ? ` (${cause.code})` : ""}`;
}

/** POSTs JSON to a path of the API server `kubeConfig` names (for subresources the generated clients lack). */
async function postJson(kubeConfig: KubeConfig, path: string, body: object): Promise<unknown> {
  const server = kubeConfig.getCurrentCluster()?.server ?? "";
  const options: Parameters<typeof request>[1] & { headers: Record<string, string> } = {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    timeout: 15_000,
  };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server), options, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if ((response.statusCode ?? 500) >= 300) {
          let message = text;
          try {
            message = (JSON.parse(text) as { message?: string }).message ?? text;
          } catch {}
          reject(new Error(`Gardener refused POST ${path}: ${response.statusCode} ${message.slice(0, 300)}`));
        } else resolve(JSON.parse(text));
      });
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`POST ${path} timed out`)));
    req.end(JSON.stringify(body));
  });
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
