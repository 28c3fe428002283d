/** The profile controller: each ProviderConfig of this provider yields one ClusterProfile, kept in step, removed when the config goes. */

import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { type ConfigOffer, OFFER_REFRESH_MS } from "../../../api/backend-contract.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import { PROVIDER_CONFIG_LABELS } from "../../../api/constants/provider-config.ts";
import { ENGINE_API_VERSION, LABELS, RESOURCES } from "../../../api/constants.ts";
import { isNotFound } from "../../../api/error-message.ts";
import type { ProviderConfig } from "../../../api/provider-config.ts";
import { claimOperations, configOwnership } from "../../../machines/cluster-profile/ownership.ts";
import {
  desiredClusterProfile,
  type ProfileOwner,
  profileName,
  profileWrite,
  providerConfigEvent,
  providerConfigStatus,
} from "../../../machines/cluster-profile/profile.ts";
import {
  type ProfileHolder,
  profileHolder,
  profileTaken,
} from "../../../machines/cluster-profile/profile-holder.ts";
import { rfc3339 } from "../../../machines/shared/rfc3339.ts";
import { patchObject, writeDesired } from "../../api-server/patch-object.ts";
import type { Backends } from "../../backends.ts";
import { GoneError } from "../../controllers/errors.ts";
import { KeyedController, type KeyedControllerSettings } from "../../controllers/keyed-controller.ts";
import { Outcome } from "../../controllers/outcome.ts";
import { enterWrite } from "../../controllers/write-loop-guard.ts";
import { EventRecorder } from "../../event-recorder.ts";
import type { Informer } from "../../informer.ts";
import type { InformerSet } from "../../informers.ts";
import { PROFILE_CACHES } from "./caches.ts";

/** What a ProviderConfig offers, or why it offers nothing. */
type Offer = (ConfigOffer | { readonly problem: string }) & { readonly lookAgain?: boolean };

/** How to run the profile controller. */
export interface ProfileControllerOptions extends KeyedControllerSettings {
  readonly kubeConfig: KubeConfig;
  readonly informers: InformerSet;
  readonly owner: ProfileOwner;
  /** The backend of each ProviderConfig (one fixed, or chosen by the config). */
  readonly backends: Backends;
}

/**
 * Level-based: for a ProviderConfig name, the desired world is "one up-to-date profile if the config
 * exists, is ours and names our backend, none otherwise". Profiles are found by their labels, so a
 * profile whose config was deleted (or went to another provider) while the controller was down is still
 * removed.
 *
 * A profile's name (`spec.profileName`, else `<environment>.<provider-name>.<config-name>`) may be held by
 * someone else: another provider's profile, or ours made for another config (see profile-holder.ts). Then
 * nothing is written to the profile and the config's Ready condition says ProfileNameTaken; the first
 * config to hold a name keeps it, and every config wanting a name is woken when a profile of that name
 * changes or goes, so the next one takes it over as soon as it is free.
 *
 * Ownership (see ownership.ts): a config is ours when `spec.providerRef.name` is our provider name; one
 * naming no provider is claimed (providerRef set, guarded by its resourceVersion) if its backend is ours;
 * any other config is another provider's and gets no write at all: no status, no claim, no profile.
 */
export class ProfileController extends KeyedController {
  readonly #options: ProfileControllerOptions;
  readonly #configs: Informer<ProviderConfig>;
  readonly #profiles: Informer<ClusterProfile>;
  readonly #api: CustomObjectsApi;
  readonly #events: EventRecorder;

  constructor(options: ProfileControllerOptions) {
    super({ ...options, name: "profile" });
    this.#options = options;
    this.#events = new EventRecorder(options.kubeConfig, this.log);
    this.#configs = options.informers.of(PROFILE_CACHES.providerConfigs);
    this.#profiles = options.informers.of(PROFILE_CACHES.profiles);
    this.#api = options.kubeConfig.makeApiClient(CustomObjectsApi);
  }

  watch(): void {
    this.#configs.on((event) => this.queue.add(event.key));
    this.#profiles.on((event) => {
      const labels = event.object.metadata?.labels ?? {};
      const config = labels[PROVIDER_CONFIG_LABELS.providerConfig];
      if (config && labels[LABELS.provider] === this.#options.owner.providerName) this.queue.add(config);
      // Every config wanting this name: one waiting for it gets it once it is free, or says who holds it.
      const name = event.object.metadata?.name;
      for (const wanting of this.#configs.list()) {
        if (profileName(this.#options.owner, wanting) === name) this.queue.add(wanting.metadata.name ?? "");
      }
    });
  }

  keys(): Iterable<string> {
    return this.#configs.keys();
  }

  /** Makes the world match the ProviderConfig `name` (or its absence). */
  async reconcile(name: string): Promise<Outcome> {
    const { owner } = this.#options;
    const found = this.#configs.get(name);
    const config = found && (await this.#claimIfFree(found));
    const ownership = config ? configOwnership(config, owner) : "gone";
    const ours = config !== undefined && ownership === "ours";
    const served = ours && owner.backends.includes(config.spec.backend);
    const offer = served ? await this.#offer(config) : undefined;
    const wanted =
      served && offer && !("problem" in offer)
        ? desiredClusterProfile(config, owner, offer.versions, offer.traits)
        : undefined;
    const holder =
      wanted && profileHolder(this.#profiles.get(wanted.metadata.name ?? ""), name, owner.providerName);
    // A name another holds is not ours to write: no profile, the condition says who holds it.
    const desired = holder && !profileTaken(holder) ? wanted : undefined;

    for (const profile of this.#ownProfilesOf(name)) {
      if (profile.metadata.name !== desired?.metadata.name) await this.#delete(profile);
    }
    if (desired) await this.#apply(desired);
    if (ours) await this.#writeStatus(config, offer, holder);
    // Said after the writes: a test (or a person) reading it knows the world is as this reconcile left it.
    this.log.debug("ProviderConfig reconciled", {
      config: name,
      ownership,
      ...(holder && profileTaken(holder) ? { profileNameTaken: wanted?.metadata.name } : {}),
    });
    // An offer read from infrastructure changes without the config changing, and a backend that could not
    // be made may be made later (e.g. once its socket is mounted): look again now and then.
    return served && offer?.lookAgain ? Outcome.requeueAfter(OFFER_REFRESH_MS) : Outcome.awaitChange();
  }

  /**
   * What the config offers: from the backend's infrastructure when it reads it there, else from the config;
   * `lookAgain` when it may change without the config changing.
   */
  async #offer(config: ProviderConfig): Promise<Offer> {
    try {
      const backend = await this.#options.backends.forConfig(config);
      if (!backend.readOffer)
        return { versions: backend.supportedVersions(config), traits: backend.traits(config) };
      return { ...(await backend.readOffer(config)), lookAgain: true };
    } catch (error) {
      return { problem: (error as Error).message, lookAgain: true };
    }
  }

  /**
   * Claims a config that names no provider when its backend is ours, and returns it as stored then; any
   * other config as it is. Of two engines claiming at once the API server takes one (the patch tests the
   * resourceVersion); the other's conflict re-reads, and finds the config another's.
   */
  async #claimIfFree(config: ProviderConfig): Promise<ProviderConfig | undefined> {
    const { owner } = this.#options;
    if (configOwnership(config, owner) !== "claimable") return config;
    const name = config.metadata.name ?? "";
    try {
      const claimed = await patchObject(
        this.#options.kubeConfig,
        {
          ...RESOURCES.ProviderConfig,
          name,
          resourceVersion: config.metadata.resourceVersion ?? "",
          ...(config.metadata.uid ? { uid: config.metadata.uid } : {}),
        },
        claimOperations(owner),
      );
      this.log.info("ProviderConfig claimed: it named no provider and its backend is ours", {
        config: name,
        backend: config.spec.backend,
      });
      return claimed as unknown as ProviderConfig;
    } catch (error) {
      // A ConflictError is retried like any error: the next reconcile reads who holds the config now.
      if (error instanceof GoneError) return undefined;
      throw error;
    }
  }

  #ownProfilesOf(configName: string): ClusterProfile[] {
    return this.#profiles.list().filter((profile) => {
      const labels = profile.metadata.labels ?? {};
      // A profile whose providerRef names another provider is theirs, whatever its labels say.
      return (
        labels[PROVIDER_CONFIG_LABELS.providerConfig] === configName &&
        labels[LABELS.provider] === this.#options.owner.providerName &&
        profile.spec.providerRef.name === this.#options.owner.providerName
      );
    });
  }

  async #apply(desired: ClusterProfile): Promise<void> {
    const name = desired.metadata.name ?? "";
    const stored = this.#profiles.get(name);
    const write = profileWrite(stored, desired);
    if (!write) return;
    if ("create" in write || !stored) {
      enterWrite(this.#options.kubeConfig, { ...RESOURCES.ClusterProfile, name });
      // Losing a race for the name (409 AlreadyExists) throws: the retry sees who holds it now.
      await this.#api.createClusterCustomObject({ ...RESOURCES.ClusterProfile, body: desired });
      this.log.info("ClusterProfile created", { profile: name });
      return;
    }
    await patchObject(
      this.#options.kubeConfig,
      {
        ...RESOURCES.ClusterProfile,
        name,
        resourceVersion: stored.metadata.resourceVersion ?? "",
        ...(stored.metadata.uid ? { uid: stored.metadata.uid } : {}),
      },
      write.patch,
    );
    this.log.info("ClusterProfile updated", { profile: name });
  }

  async #delete(profile: ClusterProfile): Promise<void> {
    const name = profile.metadata.name ?? "";
    enterWrite(this.#options.kubeConfig, {
      ...RESOURCES.ClusterProfile,
      name,
      ...(profile.metadata.uid ? { uid: profile.metadata.uid } : {}),
    });
    try {
      await this.#api.deleteClusterCustomObject({ ...RESOURCES.ClusterProfile, name });
      this.log.info("ClusterProfile deleted", { profile: name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async #writeStatus(config: ProviderConfig, offer: Offer | undefined, holder: ProfileHolder | undefined) {
    const now = rfc3339(this.clock.now());
    const status =
      offer && "problem" in offer
        ? providerConfigStatus(config, this.#options.owner, undefined, now, offer.problem)
        : providerConfigStatus(config, this.#options.owner, offer?.versions, now, undefined, holder);
    try {
      await writeDesired(this.#options.kubeConfig, RESOURCES.ProviderConfig, config, "status", status);
    } catch (error) {
      if (error instanceof GoneError) return;
      throw error;
    }
    // Told where people look (`kubectl describe providerconfig`) once the status says it.
    const event = providerConfigEvent(config.status, status);
    if (event) {
      this.#events.send(
        { apiVersion: ENGINE_API_VERSION, kind: "ProviderConfig", metadata: config.metadata },
        event,
        new Date(this.clock.now()),
      );
    }
  }

  /** Stops reconciling, then waits for the Events already recorded to be written. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.#events.flush();
  }
}
