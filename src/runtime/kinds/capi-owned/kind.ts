/**
 * The I/O half of a kind Cluster API owns, made from what is its own ({@link CapiOwnedKindSpec}): the
 * owning CAPI Cluster and the published objects read from caches, the backend observed and commanded, the
 * kubeconfig Secret and the ClusterEndpoint written. Registered only when the Cluster API side is on.
 */
import type { ClusterObservation, ClusterTarget } from "../../../api/backend.ts";
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
import type { KindSettings, MachineKind, MachineObject, ObjectReader } from "../../machine-kind.ts";
import { DEFAULT_CLUSTER_TIMING } from "../cluster/kind.ts";
import { ourProfiles, profileClaimant, profileOffer } from "../shared/profile-offer.ts";
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
      const { informers, backend, providerName, timing, log, kubeConfig, adminAccess } = context;
      const namespace = opened.metadata.namespace ?? "";
      const ownerName = owningCapiCluster(opened.metadata);
      const owner = spec.ownerOf(
        ownerName === undefined
          ? undefined
          : informers.of(CAPI_CACHES.capiClusters).get(`${namespace}/${ownerName}`),
      );
      const { profile, settings, defaultVersion } = profileOffer(context, opened.spec.profile);
      const responsibility = spec.responsibility(opened, profile, profileClaimant(context), owner);
      if (responsibility === "paused") {
        // Paused: only the Paused condition is written; no backend call, the machine does not move.
        const why = spec.pausedBy(opened, owner) ?? "";
        return reconcileWithoutBackend(spec.nothingLookedAt, (object: T, now) =>
          spec.pausedStep(object, why, now),
        );
      }
      if (responsibility !== "ours") return undefined;
      // Its profile missing and nothing built for it (no finalizer of ours): nothing to ask a backend about.
      if (!profile && !opened.metadata.finalizers?.includes(spec.finalizer)) {
        return reconcileWithoutBackend(spec.nothingLookedAt, (object: T, now) =>
          spec.step(object, {
            owner,
            profile,
            defaultVersion,
            providerName,
            observation: { backend: { exists: false }, publication: spec.nothingLookedAt },
            knownProfiles: ourProfiles(context),
            now,
            timing,
          }),
        );
      }
      const target = spec.target(opened, profile, settings);
      /** This object's backend, for what it can do (every call goes through `backend`, which routes to it). */
      const ownBackend = await context.backends.of(target);
      const { uidLabel } = spec.publisher;
      const publisher = (object: T): Publisher => ({ ...spec.publisher, metadata: object.metadata });
      /** What this reconcile published: the caches see it only later. */
      const publishedNow = new Set<"kubeconfig" | "endpoint">();

      /**
       * The backend's admin access. Where it rotates, asked of the backend at most once a resync period (the
       * engine's admin-access cache), so a backend that issues new short-lived credentials on every call
       * (Gardener) rotates the Secret once a period, not on every look.
       */
      const admin = () =>
        spec.rotatedBy
          ? adminAccess.get(target, timing.resyncMs, observedNow)
          : backend.adminAccess(target, observedNow);
      /** This reconcile's look at the backend, handed to `adminAccess` so the backend need not look again (contract 1.3). */
      let observedNow: ClusterObservation | undefined;

      const kubeconfigState = async (
        object: T,
        backendReady: boolean,
      ): Promise<CapiOwnedPublication["kubeconfig"]> => {
        if (!ownBackend.capabilities.adminAccess) return "notWanted";
        if (publishedNow.has("kubeconfig")) return "current";
        const secret = ownerName
          ? informers.of(spec.kubeconfigSecrets).get(`${namespace}/${kubeconfigSecretName(ownerName)}`)
          : undefined;
        if (!secret || secret.metadata.labels?.[uidLabel] !== object.metadata.uid) return "missing";
        if (!spec.rotatedBy || !backendReady) return "current";
        // The Secret's annotation is what is compared.
        const recorded = (secret.metadata as { annotations?: Readonly<Record<string, string>> })
          .annotations?.[spec.rotatedBy.fingerprintAnnotation];
        const access = await admin();
        const current = access && kubeconfigFingerprint(access.kubeconfig);
        return current !== undefined && recorded !== current ? "stale" : "current";
      };

      const endpointCurrent = (object: T): boolean => {
        if (publishedNow.has("endpoint")) return true;
        const endpoint = informers
          .of(CAPI_CACHES.clusterEndpoints)
          .get(`${namespace}/${clusterEndpointName(object)}`);
        const published = object.spec.controlPlaneEndpoint;
        return (
          endpoint !== undefined &&
          endpoint.metadata.labels?.[uidLabel] === object.metadata.uid &&
          published !== undefined &&
          endpoint.spec.host === published.host &&
          endpoint.spec.port === published.port
        );
      };

      const publishKubeconfig = async (object: T, capiCluster: string) => {
        const access = await admin();
        if (!access) throw new Error(`the backend gives no admin access to ${spec.what} yet`);
        const annotations = spec.rotatedBy
          ? { [spec.rotatedBy.fingerprintAnnotation]: kubeconfigFingerprint(access.kubeconfig) }
          : undefined;
        await writePublishedKubeconfig(
          kubeConfig,
          publisher(object),
          capiCluster,
          access.kubeconfig,
          annotations,
        );
        publishedNow.add("kubeconfig");
      };

      return {
        // No backend call before a CAPI Cluster owns it.
        observe: async (object) => {
          const observed = ownerName ? await backend.observe(target) : { exists: false as const };
          observedNow = observed;
          return {
            backend: observed,
            publication: {
              kubeconfig: await kubeconfigState(object, observed.exists && observed.phase === "ready"),
              endpointCurrent: endpointCurrent(object),
            },
          };
        },
        step: (object, observation, { now, lastError }) =>
          spec.step(object, {
            owner,
            profile,
            defaultVersion,
            providerName,
            observation,
            ...(lastError === undefined ? {} : { lastError }),
            ...(profile ? {} : { knownProfiles: ourProfiles(context) }),
            now,
            timing,
          }),
        unobserved: (object, failure, { now }) => spec.unobserved(object, failure, now),
        async run(commands, object) {
          for (const command of commands) {
            log.info("backend command", {
              command: command.kind,
              [spec.logKey]: objectKey(object),
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
                if (spec.rotatedBy) adminAccess.forget(object.metadata.uid ?? "");
                await backend.delete(target);
                break;
              case "publish":
                if (command.kubeconfig) await publishKubeconfig(object, command.capiCluster);
                await writePublishedEndpoint(
                  kubeConfig,
                  publisher(object),
                  command.capiCluster,
                  command.endpoint,
                );
                publishedNow.add("endpoint");
                break;
              case "unpublish":
                await deletePublished(kubeConfig, publisher(object), command.capiCluster);
                break;
            }
          }
        },
      };
    },
  };
}
