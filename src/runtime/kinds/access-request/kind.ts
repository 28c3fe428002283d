/** The AccessRequest kind's I/O half: the target cluster read and changed with the backend's admin access, the Secret written. */

import type { AccessRequest } from "../../../api/access-request.ts";
import type { ClusterTarget } from "../../../api/backend.ts";
import type { AdminScope, ClusterBackend } from "../../../api/backend-contract.ts";
import type { Cluster } from "../../../api/cluster.ts";
import { ACCESS_REQUEST_LABELS } from "../../../api/constants/access-request.ts";
import { ENDPOINTS } from "../../../api/constants/cluster.ts";
import { HIBERNATE_ANNOTATION, HIBERNATION_STATES } from "../../../api/constants/hibernation.ts";
import { CLUSTER_PHASES, LABELS, REASONS, REQUEST_PHASES } from "../../../api/constants.ts";
import { identityUid, inTransit } from "../../../api/move.ts";
import { objectKey, referenceKey } from "../../../api/object-key.ts";
import { ACCESS_REQUEST_DEFINITION } from "../../../machines/access-request/definition.ts";
import { explainAccessRequest } from "../../../machines/access-request/explain.ts";
import {
  type AccessObservation,
  type AccessSecret,
  accessDifference,
  accessFacts,
  accessPlanOf,
  accessSecretName,
  type TargetProblem,
  untilRenewal,
} from "../../../machines/access-request/facts.ts";
import { oidcTrustPlan } from "../../../machines/access-request/oidc-trust.ts";
import {
  type AccessPlan,
  type DesiredAccess,
  toDesired,
} from "../../../machines/access-request/rbac-plan.ts";
import {
  type AccessCommand,
  type AccessTiming,
  accessResponsibility,
  stepAccessRequest,
} from "../../../machines/access-request/step.ts";
import { clusterTarget } from "../../../machines/cluster/step.ts";
import { apiStatusOf, errorMessage } from "../../logger.ts";
import type {
  KindContext,
  KindSettings,
  MachineKind,
  Reconciliation,
  StepContext,
} from "../../machine-kind.ts";
import { wake } from "../../machine-kind.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";
import { CLUSTER_REQUEST_CACHES } from "../cluster-request/caches.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { profileOffer } from "../shared/profile-offer.ts";
import { deleteAccessSecret, writeAccessSecret } from "./access-secret.ts";
import { ACCESS_REQUEST_CACHES } from "./caches.ts";
import { AccessPreparationController } from "./preparation-controller.ts";
import { accessRequestShardKey } from "./shard-key.ts";
import { type AccessTargetClient, targetClient, targetProblemOf } from "./target-client.ts";

/** Defaults: tokens live 24 h; look again every 5 s while working or denied, every 5 min at rest. */
export const DEFAULT_ACCESS_TIMING = {
  tokenValidityMs: 86_400_000,
  pollMs: 5_000,
  retryMs: 5_000,
  resyncMs: 300_000,
} as const;

/**
 * The AccessRequest kind's settings besides its timing (tokenValidityMs, pollMs, retryMs, resyncMs):
 * `prepare: false` leaves the generic preparation to another (beside the openMCP operator, which does it).
 */
export interface AccessRequestSettings extends KindSettings {
  readonly prepare?: boolean;
}

/** Whose objects on the target are the request's: its first incarnation's uid, which a move keeps (see IDENTITY_ANNOTATION). */
const ownerUid = (request: AccessRequest) => identityUid(request.metadata);

/** A client for the target cluster with admin rights; or why there is none: the Cluster's (`problem`) or the backend's failure. */
async function adminClient(
  cluster: Cluster | undefined,
  name: string,
  context: KindContext,
  /** The Cluster's own backend (named in a failure's message). */
  own: ClusterBackend,
): Promise<
  | { client: AccessTargetClient; target: ClusterTarget; scope?: AdminScope }
  | { problem: string; asleep?: true }
  | { targetProblem: TargetProblem }
> {
  if (!cluster) return { problem: `Cluster ${name} does not exist` };
  const state = cluster.status?.providerStatus?.state;
  if (typeof state === "string" && HIBERNATION_STATES.has(state))
    return {
      problem: `Cluster ${name} is asleep (${state}; annotation ${HIBERNATE_ANNOTATION}): its API server does not run; the access stands and works again once the Cluster is woken`,
      asleep: true,
    };
  if (cluster.status?.phase !== CLUSTER_PHASES.ready) return { problem: `Cluster ${name} is not Ready yet` };
  const { profile, settings } = profileOffer(context, cluster.spec.profile, cluster);
  const target = clusterTarget(cluster, profile, settings);
  let admin: Awaited<ReturnType<typeof context.backend.adminAccess>>;
  try {
    // Once per rotation window (the kind's resyncMs) per Cluster, shared with the other kinds: see admin-access-cache.ts.
    admin = await context.adminAccess.get(target, context.timing.resyncMs);
  } catch (error) {
    const message = `backend ${own.name} gave no admin access to Cluster ${name}: ${errorMessage(error)}`;
    return { targetProblem: { reason: REASONS.BackendError, message } };
  }
  if (!admin) return { problem: `the backend gives no access to Cluster ${name}` };
  return {
    client: targetClient(admin),
    target,
    ...(admin.scope ? { scope: admin.scope } : {}),
  };
}

/** The Cluster's URL from the host, when it also publishes an internal one (which an engine in a Pod puts in kubeconfigs). */
function localAccessOf(cluster: Cluster | undefined): string | undefined {
  const endpoints = cluster?.status?.endpoints ?? [];
  if (!endpoints.some((endpoint) => endpoint.name === ENDPOINTS.internal)) return undefined;
  return endpoints.find((endpoint) => endpoint.name === ENDPOINTS.external)?.url;
}

/** What the Cluster's own backend is, for what it can do; without a Cluster (or its config), the engine's. */
async function backendOfCluster(cluster: Cluster | undefined, context: KindContext): Promise<ClusterBackend> {
  if (!cluster) return context.backend;
  const { profile, settings } = profileOffer(context, cluster.spec.profile, cluster);
  return context.backends.of(clusterTarget(cluster, profile, settings)).catch(() => context.backend);
}

/**
 * The other OIDC requests of this provider on the request's Cluster that may be trusted beside it: not
 * being deleted, not Denied (a denied request holds no trust).
 */
function oidcPeers(request: AccessRequest, context: KindContext): AccessRequest[] {
  const ref = request.spec.clusterRef;
  return context.informers
    .of(ACCESS_REQUEST_CACHES.accessRequests)
    .list()
    .filter(
      (other) =>
        other.metadata.uid !== request.metadata.uid &&
        other.spec.oidc !== undefined &&
        other.metadata.deletionTimestamp === undefined &&
        other.status?.phase !== REQUEST_PHASES.denied &&
        other.metadata.labels?.[LABELS.provider] === context.providerName &&
        other.spec.clusterRef?.name === ref?.name &&
        other.spec.clusterRef?.namespace === ref?.namespace,
    );
}

/**
 * Makes the Cluster trust the issuers of the OIDC requests that target it (without `request` when it is
 * `leaving`, being revoked). Throws when the request cannot be trusted beside the others (the step denies
 * such a request first; this guards a race with a request that changed meanwhile).
 */
async function trustIssuers(
  request: AccessRequest,
  target: ClusterTarget,
  context: KindContext,
  leaving: boolean,
): Promise<void> {
  const backend = await context.backends.of(target);
  const trust = backend.trustOidcIssuers;
  if (!trust) throw new Error(`backend ${backend.name} cannot set up OIDC trust`);
  const others = oidcPeers(request, context);
  const plan = oidcTrustPlan(leaving ? others : [...others, request]);
  const conflict = plan.conflicts.get(objectKey(request));
  if (conflict && !leaving) throw new Error(conflict);
  await trust.call(backend, target, plan.issuers);
}

/**
 * The AccessRequest kind. Guarantees: acts only on requests prepared for this provider; never gives
 * out an admin credential (the Secret holds a token of a ServiceAccount bound to exactly the requested
 * rules, or an OIDC login); the finalizer is stored before anything is made on the target and removed
 * only once nothing made for the request is left there; credentials never reach status, logs or Events.
 */
export const accessRequestKind: MachineKind<AccessRequest, AccessObservation, AccessCommand, AccessTiming> = {
  definition: ACCESS_REQUEST_DEFINITION,
  cache: ACCESS_REQUEST_CACHES.accessRequests,
  // The target's admin access is found through the Cluster's profile and its ProviderConfig.
  reads: [PROFILE_CACHES.profiles, PROFILE_CACHES.providerConfigs],
  timing: DEFAULT_ACCESS_TIMING,
  wakes: [
    // A Cluster that becomes Ready (or goes) matters to every request that targets it.
    wake(CLUSTER_CACHES.clusters, (cluster: Cluster, context) =>
      context.informers
        .of(ACCESS_REQUEST_CACHES.accessRequests)
        .list()
        .filter(
          (request) =>
            request.spec.clusterRef?.name === cluster.metadata.name &&
            request.spec.clusterRef?.namespace === cluster.metadata.namespace,
        )
        .map(objectKey),
    ),
    // Someone deleted or changed a Secret we made: look at its request again.
    wake(ACCESS_REQUEST_CACHES.accessSecrets, (secret: AccessSecret, context) => {
      const uid = secret.metadata.labels?.[ACCESS_REQUEST_LABELS.accessRequestUid];
      return context.informers
        .of(ACCESS_REQUEST_CACHES.accessRequests)
        .list()
        .filter((request) => request.metadata.uid === uid)
        .map(objectKey);
    }),
  ],

  shardKey: accessRequestShardKey,

  // The generic preparation every provider's requests go through first (`prepare: false` beside the
  // openMCP operator, which does it).
  controllers: (context, settings, parts) =>
    settings.prepare === false ? [] : [new AccessPreparationController({ ...context, ...parts })],

  // A deleted Cluster's admin access is forgotten (a Cluster made again under its name has another uid).
  watch(context) {
    context.informers.of(CLUSTER_CACHES.clusters).on((event) => {
      if (event.type === "delete") context.adminAccess.forget(identityUid(event.object.metadata));
    });
  },

  // OIDC requests on one Cluster share its trusted issuers: one at a time, so none overwrites another's.
  serialize: (request) =>
    request.spec.oidc && request.spec.clusterRef
      ? `oidc:${referenceKey(request.spec.clusterRef)}`
      : undefined,

  async open(request, context) {
    if (accessResponsibility(request, context.providerName) !== "ours") return undefined;
    const ref = request.spec.clusterRef;
    const name = ref ? referenceKey(ref) : "";
    const cluster = ref ? context.informers.of(CLUSTER_CACHES.clusters).get(name) : undefined;
    // A Cluster between engines (a move): its backend cannot answer for it yet; the request keeps its status.
    if (cluster && inTransit(cluster)) return undefined;
    // The Cluster's own backend, looked up once: what it can do, and its name in messages.
    const own = await backendOfCluster(cluster, context);
    const access = await adminClient(cluster, name, context, own);
    return new AccessReconciliation(request, context, { name, cluster, own, access });
  },

  describe: (command) => command,

  // The request's spans continue its ClusterRequest's (when the engine watches them: it schedules), else its
  // Cluster's, which continue the ClusterRequest's that made the Cluster.
  traceLink: ({ spec: { requestRef, clusterRef } }, { informers }) =>
    (requestRef &&
      informers.declared(CLUSTER_REQUEST_CACHES.clusterRequests)?.get(referenceKey(requestRef))) ??
    (clusterRef && informers.of(CLUSTER_CACHES.clusters).get(referenceKey(clusterRef))),

  explain: async (request) => explainAccessRequest(request),
};

/** What `open` found for one reconcile: the Cluster (by `name`), its own backend, and admin access to it or why there is none. */
interface OpenedAccess {
  readonly name: string;
  readonly cluster: Cluster | undefined;
  readonly own: ClusterBackend;
  readonly access: Awaited<ReturnType<typeof adminClient>>;
}

/** What the request asks for on the target, and the objects that give it. */
interface Planned {
  readonly plan: AccessPlan;
  readonly desired: DesiredAccess;
}

/** One reconcile of an AccessRequest this engine serves: what stays fixed for it, then observe, step and run. */
class AccessReconciliation implements Reconciliation<AccessRequest, AccessObservation, AccessCommand> {
  readonly #context: KindContext<AccessTiming>;
  readonly #opened: OpenedAccess;
  readonly #client: AccessTargetClient | undefined;
  readonly #target: ClusterTarget | undefined;
  readonly #scope: AdminScope | undefined;
  /** Undefined for a request that asks for nothing. */
  readonly #planned: Planned | undefined;
  readonly #secretName: string;
  readonly #secretKey: string;
  readonly #localAccess: string | undefined;
  /** What failed on the target in this reconcile's commands: the look after the failure reports it. */
  #failed: TargetProblem | undefined;

  constructor(request: AccessRequest, context: KindContext<AccessTiming>, opened: OpenedAccess) {
    const { access } = opened;
    this.#context = context;
    this.#opened = opened;
    this.#client = "client" in access ? access.client : undefined;
    this.#target = "target" in access ? access.target : undefined;
    this.#scope = "scope" in access ? access.scope : undefined;
    const plan = accessPlanOf(request, this.#scope);
    this.#planned = plan && { plan, desired: toDesired(plan) };
    this.#secretName = accessSecretName(request);
    this.#secretKey = `${request.metadata.namespace}/${this.#secretName}`;
    this.#localAccess = localAccessOf(opened.cluster);
  }

  async observe(object: AccessRequest): Promise<AccessObservation> {
    const { access } = this.#opened;
    const secret = this.#context.informers.of(ACCESS_REQUEST_CACHES.accessSecrets).get(this.#secretKey);
    const more = {
      ...(object.spec.oidc ? { oidcPeers: oidcPeers(object, this.#context) } : {}),
      ...(this.#scope ? { adminScope: this.#scope } : {}),
    };
    if (!this.#client) {
      return {
        clusterProblem: "problem" in access ? access.problem : undefined,
        ...("asleep" in access && access.asleep ? { clusterAsleep: true } : {}),
        ...("targetProblem" in access ? { targetProblem: access.targetProblem } : {}),
        secret,
        ...more,
      };
    }
    let read: Awaited<ReturnType<typeof readTarget>>;
    try {
      read = await readTarget(this.#client, object);
    } catch (error) {
      // A refusal or a failed connection is data for the step: a condition and an Event, not a bare retry.
      const targetProblem = this.#problemOf(error);
      this.#context.log.warn("target cluster failed", {
        request: objectKey(object),
        error: errorMessage(error),
      });
      return { clusterProblem: undefined, targetProblem, secret, ...more };
    }
    return {
      clusterProblem: undefined,
      target: read,
      ...(this.#failed ? { targetProblem: this.#failed } : {}),
      secret,
      ...more,
    };
  }

  step(object: AccessRequest, observation: AccessObservation, { now, nowMs, lastError }: StepContext) {
    const { own } = this.#opened;
    const policy = { name: own.name, adminAccess: own.capabilities.adminAccess, oidc: own.capabilities.oidc };
    return stepAccessRequest({
      request: object,
      facts: accessFacts(object, observation, this.#planned?.plan, policy, nowMs),
      secretName: this.#secretName,
      ...(observation.clusterProblem ? { clusterProblem: observation.clusterProblem } : {}),
      ...(observation.clusterAsleep ? { clusterAsleep: true } : {}),
      ...(observation.targetProblem ? { targetProblem: observation.targetProblem } : {}),
      ...(lastError === undefined ? {} : { lastError }),
      now,
      timing: this.#context.timing,
      ...withRenewal(untilRenewal(observation.secret, nowMs)),
      ...(this.#localAccess ? { localAccess: this.#localAccess } : {}),
    });
  }

  async run(commands: readonly AccessCommand[], object: AccessRequest): Promise<void> {
    const client = this.#client;
    const planned = this.#planned;
    if (!client || !planned) return;
    for (const command of commands) {
      this.#context.log.info("access command", { command, request: objectKey(object) });
      if (command === "grantAccess") await this.#grant(client, planned, object);
      else if (command === "revokeAccess") await this.#revoke(client, object);
      else await this.#writeCredential(client, object);
    }
  }

  /** Applies the plan on the target, then checks that the target holds what was applied. */
  async #grant(client: AccessTargetClient, { plan, desired }: Planned, object: AccessRequest) {
    const target = this.#target;
    if (object.spec.oidc && target) await trustIssuers(object, target, this.#context, false);
    await this.#onTarget(() => client.apply(ownerUid(object), desired));
    // An apply that leaves the target unlike the plan would be applied again on every look, at once:
    // fail instead, so it is retried with backoff and a person reads which object differs.
    const difference = accessDifference(
      await this.#onTarget(() => client.ownedObjects(ownerUid(object))),
      plan,
    );
    if (difference) {
      throw new Error(
        `Cluster ${this.#opened.name}: after applying, ${difference}; something on the target changes what the engine writes`,
      );
    }
  }

  async #revoke(client: AccessTargetClient, object: AccessRequest) {
    const target = this.#target;
    await this.#onTarget(() => client.revoke(ownerUid(object)));
    if (object.spec.oidc && target) await trustIssuers(object, target, this.#context, true);
    await deleteAccessSecret(this.#context.kubeConfig, object, this.#secretName);
  }

  /** A new token (or the OIDC login) in the request's Secret. */
  async #writeCredential(client: AccessTargetClient, object: AccessRequest) {
    const { timing, clock, kubeConfig } = this.#context;
    const secret = object.spec.token
      ? await this.#onTarget(() => client.issueToken(object, timing.tokenValidityMs, clock.now()))
      : client.oidcLogin(object);
    await writeAccessSecret(kubeConfig, object, this.#secretName, secret);
  }

  #problemOf(error: unknown): TargetProblem {
    // A credential the target no longer takes (401): ask the backend for a new one on the next look.
    if (this.#target && apiStatusOf(error)?.code === 401) this.#context.adminAccess.forget(this.#target.uid);
    return targetProblemOf(error, this.#opened.name, this.#client?.server ?? "");
  }

  /** A call on the target cluster; its failure names the Cluster, for the condition a person reads. */
  async #onTarget<R>(call: () => Promise<R>): Promise<R> {
    try {
      return await call();
    } catch (error) {
      this.#failed = { ...this.#problemOf(error), inCommand: true };
      throw new Error(`Cluster ${this.#opened.name}: ${errorMessage(error)}`, { cause: error });
    }
  }
}

/** What the request's observation reads on the target: its objects, the roles it names, the roles it binds that are missing. */
async function readTarget(client: AccessTargetClient, request: AccessRequest) {
  const [owned, namedRoles, missingRoles] = await Promise.all([
    client.ownedObjects(ownerUid(request)),
    client.namedRoles(request),
    client.missingRoles(request),
  ]);
  return { owned, namedRoles, missingRoles };
}

function withRenewal(ms: number | undefined): { untilRenewalMs?: number } {
  return ms === undefined ? {} : { untilRenewalMs: ms };
}
