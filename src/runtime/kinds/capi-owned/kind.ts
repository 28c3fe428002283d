/**
 * The I/O half of a kind Cluster API owns, made from what is its own ({@link CapiOwnedKindSpec}): the
 * owning CAPI Cluster and the published objects read from caches, the backend observed and commanded, the
 * kubeconfig Secret and the ClusterEndpoint written. Registered only when the Cluster API side is on.
 */
import type { ClusterObservation, ClusterTarget } from "../../../api/backend.ts";
import type { ClusterBackend } from "../../../api/backend-contract.ts";
import { type CapiCluster, kubeconfigSecretName, owningCapiCluster } from "../../../api/cluster-api.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { JsonObject } from "../../../api/common.ts";
import { objectKey } from "../../../api/object-key.ts";
import type {
  CapiOwnedCommand,
  CapiOwnedObject,
  CapiOwnedObservation,
  CapiOwnedPublication,
  CapiOwnedResponsibility,
} from "../../../machines/capi-owned/contract.ts";
import type { ProfileClaimant } from "../../../machines/cluster-profile/profile-reference.ts";
import type { Explanation } from "../../../machines/shared/explanation.ts";
import type { MachineDefinition } from "../../../machines/shared/machine-definition.ts";
import type { MachineStep } from "../../../machines/shared/machine-step.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import type { CacheSpec, SecretObject } from "../../informers.ts";
import type {
  KindContext,
  KindSettings,
  MachineKind,
  MachineObject,
  ObjectReader,
  Reconciliation,
  StepContext,
} from "../../machine-kind.ts";
import { DEFAULT_CLUSTER_TIMING } from "../cluster/kind.ts";
import { ourProfiles, type ProfileOffer, profileClaimant, profileOffer } from "../shared/profile-offer.ts";
import { CAPI_CACHES } from "./caches.ts";
import { capiOwnedWakes, reconcileWithoutBackend } from "./capi-owned.ts";
import {
  clusterEndpointName,
  deletePublished,
  kubeconfigFingerprint,
  type Publisher,
  writePublishedEndpoint,
  writePublishedKubeconfig,
} from "./publication.ts";

/** A step's input besides the object: the family's parts, and the owner as the kind reads it. */
export interface CapiOwnedStepParts<Owner> {
  readonly owner: Owner;
  readonly profile: ClusterProfile | undefined;
  readonly defaultVersion: string | undefined;
  readonly providerName: string;
  readonly observation: CapiOwnedObservation;
  readonly lastError?: string;
  readonly now: string;
  readonly timing: RequeueTiming;
  /** While its profile is missing: this provider's profiles, named beside the missing one. */
  readonly knownProfiles?: readonly string[];
}

type Step<T extends CapiOwnedObject> = MachineStep<T["metadata"], unknown, CapiOwnedCommand>;

/** What a CAPI-owned kind's I/O half has of its own; everything else is the family's. */
export interface CapiOwnedKindSpec<T extends MachineObject & CapiOwnedObject, Owner> {
  readonly definition: MachineDefinition;
  readonly cache: CacheSpec<T>;
  /** The kubeconfig Secrets it made (labelled with its uid). */
  readonly kubeconfigSecrets: CacheSpec<SecretObject>;
  /** It as the publisher of its kubeconfig Secret and ClusterEndpoint (`uidLabel` marks what it made). */
  readonly publisher: Omit<Publisher, "metadata">;
  /** The key naming it in the backend command log (`engineCluster`). */
  readonly logKey: string;
  /** Our finalizer on its objects: one that holds it may have something built at the backend. */
  readonly finalizer: string;
  /** What the backend builds for it, in words (`the cluster`). */
  readonly what: string;
  /** Its owning CAPI Cluster (undefined until CAPI sets the ownerReference) as its step reads it. */
  ownerOf(capiCluster: CapiCluster | undefined): Owner;
  /** What a paused reconcile observes: nothing (its step reads nothing of it). */
  readonly nothingLookedAt: CapiOwnedPublication;
  /**
   * Kinds whose backend may issue new admin credentials: the kubeconfig is read through the engine's
   * admin-access cache and its fingerprint, recorded in this annotation of the Secret, tells a stale one.
   */
  readonly rotatedBy?: { readonly fingerprintAnnotation: string };
  responsibility(
    object: T,
    profile: ClusterProfile | undefined,
    claimant: ProfileClaimant,
    owner: Owner,
  ): CapiOwnedResponsibility;
  pausedBy(object: T, owner: Owner): string | undefined;
  pausedStep(object: T, why: string, now: string): Step<T>;
  /** Its status while the backend cannot be looked at (pure); see {@link Reconciliation.unobserved}. */
  unobserved(object: T, failure: string, now: string): unknown;
  target(object: T, profile: ClusterProfile | undefined, settings?: JsonObject): ClusterTarget;
  step(object: T, parts: CapiOwnedStepParts<Owner>): Step<T>;
  describe(command: CapiOwnedCommand): string;
  explain(object: T, read: ObjectReader): Promise<Explanation>;
}

/** The settings of a CAPI-owned kind besides its timing: `enabled: true` serves Cluster API (its CRDs must be installed). */
export interface CapiOwnedSettings extends KindSettings {
  readonly enabled?: boolean;
}

/** A CAPI-owned kind, timed as the Cluster kind (it builds clusters alike), driven only with the Cluster API side on. */
export function capiOwnedKind<T extends MachineObject & CapiOwnedObject, Owner>(
  spec: CapiOwnedKindSpec<T, Owner>,
): MachineKind<T, CapiOwnedObservation, CapiOwnedCommand, RequeueTiming> {
  return {
    definition: spec.definition,
    cache: spec.cache,
    timing: DEFAULT_CLUSTER_TIMING,
    enabled: (settings) => settings.enabled === true,
    wakes: capiOwnedWakes(spec.cache, spec.kubeconfigSecrets, spec.publisher.uidLabel),
    describe: spec.describe,
    explain: spec.explain,

    async open(opened, context) {
      const namespace = opened.metadata.namespace ?? "";
      const ownerName = owningCapiCluster(opened.metadata);
      const owner = spec.ownerOf(
        ownerName === undefined
          ? undefined
          : context.informers.of(CAPI_CACHES.capiClusters).get(`${namespace}/${ownerName}`),
      );
      const offer = profileOffer(context, opened.spec.profile);
      const responsibility = spec.responsibility(opened, offer.profile, profileClaimant(context), owner);
      if (responsibility === "paused") {
        // Paused: only the Paused condition is written; no backend call, the machine does not move.
        const why = spec.pausedBy(opened, owner) ?? "";
        return reconcileWithoutBackend(spec.nothingLookedAt, (object: T, now) =>
          spec.pausedStep(object, why, now),
        );
      }
      if (responsibility !== "ours") return undefined;
      // Its profile missing and nothing built for it (no finalizer of ours): nothing to ask a backend about.
      if (!offer.profile && !opened.metadata.finalizers?.includes(spec.finalizer)) {
        const observation = { backend: { exists: false }, publication: spec.nothingLookedAt } as const;
        return reconcileWithoutBackend(spec.nothingLookedAt, (object: T, now) =>
          spec.step(object, stepParts(context, owner, offer, observation, { now, lastError: undefined })),
        );
      }
      const target = spec.target(opened, offer.profile, offer.settings);
      const ownBackend = await context.backends.of(target);
      return new BackendReconcile(spec, context, { owner, ownerName, namespace, offer, target, ownBackend });
    },
  };
}

/** What a step of a CAPI-owned kind is given besides the object, from what `open` gathered and what was observed. */
function stepParts<Owner>(
  context: KindContext,
  owner: Owner,
  offer: ProfileOffer,
  observation: CapiOwnedObservation,
  { now, lastError }: Pick<StepContext, "now" | "lastError">,
): CapiOwnedStepParts<Owner> {
  return {
    owner,
    profile: offer.profile,
    defaultVersion: offer.defaultVersion,
    providerName: context.providerName,
    observation,
    ...(lastError === undefined ? {} : { lastError }),
    ...(offer.profile ? {} : { knownProfiles: ourProfiles(context) }),
    now,
    timing: context.timing,
  };
}

/** What `open` fixed for a reconcile at the backend: the owner, the profile's offer, the target and its backend. */
interface OpenedAtBackend<Owner> {
  readonly owner: Owner;
  /** The owning CAPI Cluster's name; undefined until CAPI sets the ownerReference (no backend call before). */
  readonly ownerName: string | undefined;
  readonly namespace: string;
  readonly offer: ProfileOffer;
  readonly target: ClusterTarget;
  /** This object's backend, for what it can do (every call goes through `backend`, which routes to it). */
  readonly ownBackend: ClusterBackend;
}

/**
 * One reconcile of a CAPI-owned object its backend builds: its look at the backend and at the published kubeconfig
 * Secret and ClusterEndpoint, and its commands. Lives for one reconcile, so what it observed and published are
 * this reconcile's own.
 */
class BackendReconcile<T extends MachineObject & CapiOwnedObject, Owner>
  implements Reconciliation<T, CapiOwnedObservation, CapiOwnedCommand>
{
  readonly #spec: CapiOwnedKindSpec<T, Owner>;
  readonly #context: KindContext;
  readonly #opened: OpenedAtBackend<Owner>;
  /** What this reconcile published: the caches see it only later. */
  readonly #publishedNow = new Set<"kubeconfig" | "endpoint">();
  /** This reconcile's look at the backend, handed to `adminAccess` so the backend need not look again (contract 1.3). */
  #observedNow: ClusterObservation | undefined;

  constructor(spec: CapiOwnedKindSpec<T, Owner>, context: KindContext, opened: OpenedAtBackend<Owner>) {
    this.#spec = spec;
    this.#context = context;
    this.#opened = opened;
  }

  // No backend call before a CAPI Cluster owns it.
  async observe(object: T): Promise<CapiOwnedObservation> {
    const observed = this.#opened.ownerName
      ? await this.#context.backend.observe(this.#opened.target)
      : { exists: false as const };
    this.#observedNow = observed;
    return {
      backend: observed,
      publication: {
        kubeconfig: await this.#kubeconfigState(object, observed.exists && observed.phase === "ready"),
        endpointCurrent: this.#endpointCurrent(object),
      },
    };
  }

  step(object: T, observation: CapiOwnedObservation, context: StepContext): Step<T> {
    const { owner, offer } = this.#opened;
    return this.#spec.step(object, stepParts(this.#context, owner, offer, observation, context));
  }

  unobserved(object: T, failure: string, { now }: StepContext): unknown {
    return this.#spec.unobserved(object, failure, now);
  }

  async run(commands: readonly CapiOwnedCommand[], object: T): Promise<void> {
    const { backend, kubeConfig, adminAccess, log } = this.#context;
    const { target } = this.#opened;
    for (const command of commands) {
      log.info("backend command", {
        command: command.kind,
        [this.#spec.logKey]: objectKey(object),
        ...("version" in command ? { version: command.version } : {}),
      });
      switch (command.kind) {
        case "create":
          await backend.create(target, command.version);
          break;
        case "update":
          await backend.update(target, command.version);
          break;
        case "delete":
          if (this.#spec.rotatedBy) adminAccess.forget(object.metadata.uid ?? "");
          await backend.delete(target);
          break;
        case "publish":
          if (command.kubeconfig) await this.#publishKubeconfig(object, command.capiCluster);
          await writePublishedEndpoint(
            kubeConfig,
            this.#publisher(object),
            command.capiCluster,
            command.endpoint,
          );
          this.#publishedNow.add("endpoint");
          break;
        case "unpublish":
          await deletePublished(kubeConfig, this.#publisher(object), command.capiCluster);
          break;
      }
    }
  }

  #publisher(object: T): Publisher {
    return { ...this.#spec.publisher, metadata: object.metadata };
  }

  /**
   * The backend's admin access. Where it rotates, asked of the backend at most once a resync period (the
   * engine's admin-access cache), so a backend that issues new short-lived credentials on every call
   * (Gardener) rotates the Secret once a period, not on every look.
   */
  #admin() {
    const { adminAccess, backend, timing } = this.#context;
    return this.#spec.rotatedBy
      ? adminAccess.get(this.#opened.target, timing.resyncMs, this.#observedNow)
      : backend.adminAccess(this.#opened.target, this.#observedNow);
  }

  async #kubeconfigState(object: T, backendReady: boolean): Promise<CapiOwnedPublication["kubeconfig"]> {
    const { ownerName, namespace, ownBackend } = this.#opened;
    if (!ownBackend.capabilities.adminAccess) return "notWanted";
    if (this.#publishedNow.has("kubeconfig")) return "current";
    const secret = ownerName
      ? this.#context.informers
          .of(this.#spec.kubeconfigSecrets)
          .get(`${namespace}/${kubeconfigSecretName(ownerName)}`)
      : undefined;
    if (!secret || secret.metadata.labels?.[this.#spec.publisher.uidLabel] !== object.metadata.uid)
      return "missing";
    const { rotatedBy } = this.#spec;
    if (!rotatedBy || !backendReady) return "current";
    // The Secret's annotation is what is compared.
    const recorded = (secret.metadata as { annotations?: Readonly<Record<string, string>> }).annotations?.[
      rotatedBy.fingerprintAnnotation
    ];
    const access = await this.#admin();
    const current = access && kubeconfigFingerprint(access.kubeconfig);
    return current !== undefined && recorded !== current ? "stale" : "current";
  }

  #endpointCurrent(object: T): boolean {
    if (this.#publishedNow.has("endpoint")) return true;
    const endpoint = this.#context.informers
      .of(CAPI_CACHES.clusterEndpoints)
      .get(`${this.#opened.namespace}/${clusterEndpointName(object)}`);
    const published = object.spec.controlPlaneEndpoint;
    return (
      endpoint !== undefined &&
      endpoint.metadata.labels?.[this.#spec.publisher.uidLabel] === object.metadata.uid &&
      published !== undefined &&
      endpoint.spec.host === published.host &&
      endpoint.spec.port === published.port
    );
  }

  async #publishKubeconfig(object: T, capiCluster: string): Promise<void> {
    const access = await this.#admin();
    if (!access) throw new Error(`the backend gives no admin access to ${this.#spec.what} yet`);
    const { rotatedBy } = this.#spec;
    const annotations = rotatedBy
      ? { [rotatedBy.fingerprintAnnotation]: kubeconfigFingerprint(access.kubeconfig) }
      : undefined;
    await writePublishedKubeconfig(
      this.#context.kubeConfig,
      this.#publisher(object),
      capiCluster,
      access.kubeconfig,
      annotations,
    );
    this.#publishedNow.add("kubeconfig");
  }
}
