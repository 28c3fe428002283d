/** The AccessRequest controller: pure step over facts gathered from the Cluster, the backend and the target cluster. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { AccessRequest } from "../api/access-request.ts";
import type { ClusterBackend } from "../api/backend-contract.ts";
import type { Cluster } from "../api/cluster.ts";
import { ACCESS_SECRET_KEYS, CLUSTER_PHASES, FINALIZERS, LABELS, RESOURCES } from "../api/constants.ts";
import { renewalDue, renewalTime } from "../machines/access-request/kubeconfig.ts";
import { accessRequestMachine } from "../machines/access-request/machine.ts";
import {
  type DesiredAccess,
  desiredOidcAccess,
  desiredTokenAccess,
} from "../machines/access-request/rbac-plan.ts";
import { invalidRules } from "../machines/access-request/rbac-validation.ts";
import {
  type AccessStepResult,
  accessResponsibility,
  stepAccessRequest,
} from "../machines/access-request/step.ts";
import { clusterTarget } from "../machines/cluster/step.ts";
import { applied, diff, type Json, type PatchOperation } from "../machines/shared/json-patch.ts";
import { deleteAccessSecret, writeAccessSecret } from "./access-secret.ts";
import { type AccessTargetClient, targetClient } from "./access-target-client.ts";
import { type Clock, systemClock } from "./clock.ts";
import { controllerQueue } from "./controller-queue.ts";
import { EventRecorder, eventsWorthRecording } from "./event-recorder.ts";
import type { AccessSecret, EngineInformers } from "./informers.ts";
import { type Logger, silentLogger } from "./logger.ts";
import { type MachineObserver, tellObservers } from "./machine-observer.ts";
import type { EngineMetrics } from "./metrics.ts";
import { Outcome } from "./outcome.ts";
import { GoneError, patchObject } from "./patch-object.ts";
import type { WorkQueue } from "./work-queue.ts";

/** How long issued tokens live, and when to look again. */
export interface AccessTiming {
  /** Validity of issued tokens (the API server's minimum is 10 minutes). Default 24 h. */
  readonly tokenValidityMs: number;
  /** Look again while waiting for a Cluster or after a write. Default 5 s. */
  readonly pollMs: number;
  /** Look again at rest, to notice drift on the target. Default 5 min. */
  readonly resyncMs: number;
}

/** Defaults of {@link AccessTiming}. */
export const DEFAULT_ACCESS_TIMING: AccessTiming = {
  tokenValidityMs: 86_400_000,
  pollMs: 5_000,
  resyncMs: 300_000,
};

/** How to run the controller. */
export interface AccessRequestControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly informers: EngineInformers;
  readonly providerName: string;
  readonly backend: ClusterBackend;
  readonly timing?: AccessTiming;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly metrics?: EngineMetrics;
  readonly observers?: readonly MachineObserver[];
}

const MAX_ROUNDS = 3;

/** The Secret with the kubeconfig: named after the request, in its namespace. */
export function accessSecretName(request: AccessRequest): string {
  return `${request.metadata.name}.kubeconfig`;
}

/**
 * Guarantees: acts only on requests that are prepared for this provider (the reference's rule); never
 * gives out an admin credential (the Secret holds a token of a ServiceAccount bound to exactly the
 * requested rules, or an OIDC login); the finalizer is stored before anything is created on the target
 * cluster and removed only once nothing made for the request is left there; credentials never appear in
 * status, logs or Events.
 */
export class AccessRequestController {
  readonly queue: WorkQueue;
  readonly #options: AccessRequestControllerOptions;
  readonly #informers: EngineInformers;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #timing: AccessTiming;
  readonly #events: EventRecorder;

  constructor(options: AccessRequestControllerOptions) {
    this.#options = options;
    this.#informers = options.informers;
    this.#clock = options.clock ?? systemClock;
    this.#log = (options.log ?? silentLogger).with({ controller: "accessrequest" });
    this.#timing = options.timing ?? DEFAULT_ACCESS_TIMING;
    this.#events = new EventRecorder(options.kubeConfig, this.#log);
    this.queue = controllerQueue({
      name: "accessrequest",
      concurrency: 2,
      clock: this.#clock,
      log: this.#log,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
  }

  /** Registers the cache handlers; call before the informers start. */
  watch(): void {
    const { accessRequests, clusters, accessSecrets } = this.#informers;
    accessRequests.on((event) => {
      this.queue.add(event.key);
      if (event.type === "delete") {
        for (const observer of this.#options.observers ?? [])
          observer.removed("AccessRequest", event.object.metadata.uid ?? "");
      }
    });
    // A Cluster that becomes Ready (or goes) matters to every request that targets it.
    clusters.on((event) => {
      for (const request of accessRequests.list()) {
        const ref = request.spec.clusterRef;
        if (ref?.name === event.object.metadata.name && ref?.namespace === event.object.metadata.namespace) {
          this.queue.add(`${request.metadata.namespace}/${request.metadata.name}`);
        }
      }
    });
    // Someone deleted or changed a Secret we made: look at its request again.
    accessSecrets.on((event) => {
      const uid = event.object.metadata.labels?.[LABELS.accessRequestUid];
      const owner = accessRequests.list().find((request) => request.metadata.uid === uid);
      if (owner) this.queue.add(`${owner.metadata.namespace}/${owner.metadata.name}`);
    });
  }

  /** Starts reconciling; call once the informers have synced. */
  run(): void {
    this.queue.start((key) => this.reconcile(key));
  }

  /** Waits for reconciles in flight. */
  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  /** One reconcile of the AccessRequest with this key. */
  async reconcile(key: string): Promise<Outcome> {
    const request = this.#informers.accessRequests.get(key);
    if (!request) return Outcome.awaitChange();
    if (accessResponsibility(request, this.#options.providerName) !== "ours") return Outcome.awaitChange();

    const cluster = this.#clusterOf(request);
    const access = cluster ? await this.#adminClient(cluster) : undefined;
    const desired = this.#desired(request);
    let stored = request;
    let local = request;
    let result: AccessStepResult | undefined;
    const steps: AccessStepResult[] = [];
    const events: AccessStepResult["events"][number][] = [];
    let committed = false;
    try {
      for (let round = 1; round <= MAX_ROUNDS; round++) {
        const facts = await this.#facts(local, access?.client, desired);
        result = stepAccessRequest({
          request: local,
          facts,
          secretName: accessSecretName(request),
          ...(access?.problem ? { clusterProblem: access.problem } : {}),
          now: new Date(this.#clock.now()).toISOString().replace(/\.\d+Z$/, "Z"),
        });
        steps.push(result);
        events.push(...result.events);
        local = applied(local, result.statusPatch);
        if (result.commands.length === 0 || round === MAX_ROUNDS) break;
        // The finalizer goes in before anything is created on the target; the status waits for the outcome.
        stored = await this.#patch(stored, result.metadataPatch);
        local = { ...stored, status: local.status } as AccessRequest;
        if (access?.client && desired) await this.#run(result.commands, stored, access.client, desired);
      }
      if (result) {
        stored = await this.#patch(stored, result.metadataPatch);
        stored = await this.#patch(stored, statusDiff(stored, local), "status");
      }
      committed = true;
    } catch (error) {
      if (error instanceof GoneError) {
        committed = true; // our finalizer went and the request with it: the step's outcome stands
        return Outcome.awaitChange();
      }
      throw error;
    } finally {
      // Only what happened: a reconcile on a stale copy, whose writes were refused, tells nothing.
      const now = new Date(this.#clock.now());
      for (const event of committed ? eventsWorthRecording(events) : []) {
        await this.#events.record(request, event, now);
      }
      if (committed) this.#tellObservers(request, steps);
    }
    if (!result) return Outcome.awaitChange();
    this.#log.info("reconciled", { key, state: result.state });
    return Outcome.requeueAfter(this.#requeueAfter(result.state, request));
  }

  #clusterOf(request: AccessRequest): Cluster | undefined {
    const ref = request.spec.clusterRef;
    return ref ? this.#informers.clusters.get(`${ref.namespace}/${ref.name}`) : undefined;
  }

  /** A client for the target cluster with admin rights, or why there is none. */
  async #adminClient(cluster: Cluster): Promise<{ client?: AccessTargetClient; problem?: string }> {
    const name = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
    if (cluster.status?.phase !== CLUSTER_PHASES.ready)
      return { problem: `Cluster ${name} is not Ready yet` };
    const profile = this.#informers.profiles.get(cluster.spec.profile);
    const settings = profile
      ? this.#informers.providerConfigs.get(profile.spec.providerConfigRef.name)?.spec.settings
      : undefined;
    const admin = await this.#options.backend.adminAccess(clusterTarget(cluster, profile, settings));
    if (!admin) return { problem: `the backend gives no access to Cluster ${name}` };
    return { client: targetClient(admin.kubeconfig) };
  }

  #desired(request: AccessRequest): DesiredAccess | undefined {
    if (request.spec.token) return desiredTokenAccess(request);
    if (request.spec.oidc) return desiredOidcAccess(request);
    return undefined;
  }

  /** Level-based facts: the request, the target cluster as it is now, and the Secret. */
  async #facts(
    request: AccessRequest,
    client: AccessTargetClient | undefined,
    desired: DesiredAccess | undefined,
  ) {
    const uid = request.metadata.uid ?? "";
    const hasFinalizer = request.metadata.finalizers?.includes(FINALIZERS.accessRequest) ?? false;
    const deleting = request.metadata.deletionTimestamp !== undefined;
    const secret = this.#secretOf(request);
    const denial = await this.#denial(request, client);
    if (!client || !desired) {
      return {
        deleting,
        hasFinalizer,
        clusterReachable: false,
        denial,
        accessInPlace: false,
        accessGone: false,
        secretValid: false,
      };
    }
    const existing = await client.ownedObjects(uid);
    return {
      deleting,
      hasFinalizer,
      clusterReachable: true,
      denial,
      accessInPlace: client.matches(existing, desired),
      accessGone: existing.length === 0,
      secretValid: secret !== undefined && this.#secretFresh(secret),
    };
  }

  async #denial(request: AccessRequest, client: AccessTargetClient | undefined): Promise<string | undefined> {
    if (request.spec.oidc && !this.#options.backend.capabilities.oidc) {
      return `backend ${this.#options.backend.name} cannot set up OIDC trust; request token access instead`;
    }
    const invalid = invalidRules(request);
    if (invalid) return invalid;
    const foreignSecret = this.#foreignSecret(request);
    if (foreignSecret) return foreignSecret;
    return client ? client.conflicts(request) : undefined;
  }

  /** The Secret with the request's kubeconfig, as the (labelled) Secret cache holds it. */
  #secretOf(request: AccessRequest): AccessSecret | undefined {
    return this.#informers.accessSecrets.get(`${request.metadata.namespace}/${accessSecretName(request)}`);
  }

  /** A Secret with our name that we did not make is never overwritten. */
  #foreignSecret(request: AccessRequest): string | undefined {
    const secret = this.#secretOf(request);
    if (!secret || secret.metadata.labels?.[LABELS.accessRequestUid] === request.metadata.uid)
      return undefined;
    return `Secret ${accessSecretName(request)} belongs to another AccessRequest`;
  }

  /** Whether the Secret holds a kubeconfig whose token is not yet due for renewal. */
  #secretFresh(secret: AccessSecret): boolean {
    if (!secret.data?.[ACCESS_SECRET_KEYS.kubeconfig]) return false;
    const times = tokenTimes(secret);
    return times === undefined || !renewalDue(times.created, times.expires, this.#clock.now()); // OIDC: nothing expires
  }

  async #run(
    commands: AccessStepResult["commands"],
    request: AccessRequest,
    client: AccessTargetClient,
    desired: DesiredAccess,
  ): Promise<void> {
    for (const command of commands) {
      this.#log.info("access command", {
        command,
        request: `${request.metadata.namespace}/${request.metadata.name}`,
      });
      if (command === "grantAccess") await client.apply(request.metadata.uid ?? "", desired);
      else if (command === "revokeAccess") {
        await client.revoke(request.metadata.uid ?? "");
        await deleteAccessSecret(this.#options.kubeConfig, request, accessSecretName(request));
      } else {
        const secret = request.spec.token
          ? await client.issueToken(request, this.#timing.tokenValidityMs, this.#clock.now())
          : client.oidcLogin(request);
        await writeAccessSecret(this.#options.kubeConfig, request, accessSecretName(request), secret);
      }
    }
  }

  #requeueAfter(state: string, request: AccessRequest): number {
    if (state !== "granted") return this.#timing.pollMs;
    const secret = this.#secretOf(request);
    const times = secret ? tokenTimes(secret) : undefined;
    if (!times) return this.#timing.resyncMs;
    const untilRenewal = renewalTime(times.created, times.expires) - this.#clock.now();
    return Math.max(1_000, Math.min(this.#timing.resyncMs, untilRenewal));
  }

  async #patch(
    request: AccessRequest,
    operations: readonly PatchOperation[],
    subresource?: "status",
  ): Promise<AccessRequest> {
    const stored = await patchObject(
      this.#options.kubeConfig,
      {
        ...RESOURCES.AccessRequest,
        namespace: request.metadata.namespace ?? "",
        name: request.metadata.name ?? "",
        resourceVersion: request.metadata.resourceVersion ?? "",
      },
      operations,
      subresource,
    );
    return stored ? (stored as unknown as AccessRequest) : request;
  }

  #tellObservers(request: AccessRequest, steps: readonly AccessStepResult[]): void {
    const resource = { kind: "AccessRequest", machine: accessRequestMachine, metadata: request.metadata };
    tellObservers(this.#options.observers, resource, steps, this.#clock.now());
  }
}

/** Issue and expiry (Unix seconds) of the token in an access Secret; undefined when it has none (OIDC). */
function tokenTimes(secret: AccessSecret): { created: number; expires: number } | undefined {
  const read = (key: string) => {
    const value = secret.data?.[key];
    return value ? Number(Buffer.from(value, "base64").toString("utf8")) : Number.NaN;
  };
  const created = read(ACCESS_SECRET_KEYS.creationTimestamp);
  const expires = read(ACCESS_SECRET_KEYS.expirationTimestamp);
  return Number.isFinite(created) && Number.isFinite(expires) ? { created, expires } : undefined;
}

function statusDiff(stored: AccessRequest, local: AccessRequest): PatchOperation[] {
  return diff(
    stored.status === undefined ? {} : { status: stored.status as unknown as Json },
    local.status === undefined ? {} : { status: local.status as unknown as Json },
  );
}
