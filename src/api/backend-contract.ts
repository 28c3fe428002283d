/** The interface a provider backend implements: the engine's only way to touch infrastructure. */

import type { ClusterObservation, ClusterTarget } from "./backend.ts";
import type { Clock } from "./clock.ts";
import type { SupportedVersion } from "./cluster-profile.ts";
import type { JsonObject } from "./common.ts";
import type { SnapshotManifest, SnapshotReference, SnapshotRejectedError } from "./control-plane-snapshot.ts";
import type { Logger } from "./logger.ts";
import type { ProviderConfig } from "./provider-config.ts";

/**
 * The version of this contract, by semantic versioning: a new major version changes or removes something a
 * backend relies on; a new minor version adds something (an optional method, a context field) that a backend
 * built for it may use. A backend module says which version it was built for (`contractVersion`), and the
 * engine loads it only if it implements the same major version and at least that minor one.
 */
export const BACKEND_CONTRACT_VERSION = "1.8.0";

/** How often the engine reads the offer of a backend that implements {@link ClusterBackend.readOffer}. */
export const OFFER_REFRESH_MS = 60_000;

/** A contract version, `MAJOR.MINOR.PATCH`. */
export type BackendContractVersion = `${number}.${number}.${number}`;

/** What a backend can do beyond the required lifecycle. */
export interface BackendCapabilities {
  /** Its clusters are real API servers it can give admin access to (so AccessRequests can be granted). */
  readonly adminAccess: boolean;
  /** It can set up OIDC trust on its clusters (AccessRequests with `spec.oidc`). */
  readonly oidc: boolean;
}

/**
 * An OIDC issuer a cluster trusts, and how the claims of its tokens become users and groups there:
 * `audiences` are the client IDs its tokens may be issued for. One issuer URL may come in several entries
 * with different mappings (two teams on one identity provider); their audiences never overlap, and a token
 * is mapped by the entry that lists its audience (`authenticationConfig` in src/providers/shared/authentication-config.ts
 * writes that as one JWT authenticator per URL). The engine passes only issuers kube-apiserver accepts
 * (https, no query, fragment or user; at most 64 URLs).
 */
export interface OidcTrust {
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly usernameClaim: string;
  /** Put before every user name (`<provider name>:` unless the request says otherwise). */
  readonly usernamePrefix: string;
  readonly groupsClaim: string;
  readonly groupsPrefix: string;
}

/** What a ProviderConfig offers, as a backend that reads it from infrastructure finds it (see {@link ClusterBackend.readOffer}). */
export interface ConfigOffer {
  readonly versions: readonly SupportedVersion[];
  readonly traits: readonly string[];
}

/**
 * What an admin kubeconfig may do when it is not cluster-admin (contract 1.2): admin of some namespaces only,
 * as a tenant of a shared host cluster is (a namespace per Cluster, Capsule, kcp workspaces).
 */
export interface AdminScope {
  /** The namespaces the kubeconfig is admin of (it may create Roles, RoleBindings, ServiceAccounts and tokens there). */
  readonly namespaces: readonly string[];
  /**
   * Where the engine keeps the objects it makes to grant access (ServiceAccounts): one of `namespaces`. The
   * engine creates no namespace, lists nothing across namespaces and denies a request for cluster-wide
   * permissions or for a namespace outside `namespaces`, with a reason.
   */
  readonly accessNamespace: string;
}

/** Admin access to one cluster, for granting AccessRequests. Kept in memory by the engine; never in status, logs or Events. */
export interface AdminAccess {
  /** A kubeconfig (YAML) with admin rights on the cluster: cluster-admin unless `scope` says otherwise. */
  readonly kubeconfig: string;
  /** Optional (contract 1.2): the kubeconfig is admin of these namespaces only; absent means cluster-admin. */
  readonly scope?: AdminScope;
}

/**
 * A provider backend. The engine calls it only from its runtime, never from the machines, and never
 * for a Cluster that belongs to another provider.
 *
 * Contract (the same for every backend; the conformance kit, `openmcp-engine/conformance`, checks it):
 * - `observe` only reads. It reports `{ exists: false }` for a cluster it does not hold.
 * - `create`, `update` and `delete` are idempotent: calling one twice, or again after the controller
 *   restarted (a new instance on the same state directory), has the effect of calling it once. `create`
 *   never makes a second cluster for one Cluster object (keyed by `target.uid`); `delete` of an absent
 *   cluster succeeds. A command may return before the work is done; `observe` tells when it is
 *   (`ready` with an endpoint, or absent after a delete).
 * - A command that cannot succeed throws an Error whose message a person can act on; a command that
 *   threw may or may not have taken effect, and the engine simply calls it again.
 * - Versions reported by `observe` are ones `supportedVersions` offered.
 * - No secret (kubeconfig, token, key) ever appears in an observation or an error message.
 */
export interface ClusterBackend {
  /** Short name used in logs, e.g. `simulated`. */
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  /**
   * Optional (contract 1.2): the kind the names in a Cluster's `spec.clusterConfigs` refer to (e.g. openMCP's
   * Gardener `ClusterConfig`). The runtime then reads those objects from the Cluster's namespace on every
   * reconcile and passes them as `target.clusterConfigs`; without it they are not read.
   */
  readonly clusterConfigResource?: {
    readonly group: string;
    readonly version: string;
    readonly plural: string;
  };
  /** The versions a ClusterProfile made from `config` offers: what the backend can build of what the config lists. */
  supportedVersions(config: ProviderConfig): readonly SupportedVersion[];
  /** Properties of the clusters made from `config`, e.g. `workerless`. */
  traits(config: ProviderConfig): readonly string[];
  /**
   * Optional (contract 1.1), for backends whose offer lives in infrastructure (Gardener's CloudProfile): reads
   * what `config` offers; the engine then uses it instead of `supportedVersions` and `traits`, and reads it
   * again every {@link OFFER_REFRESH_MS}. Throws when the config cannot be served (unreachable garden, missing
   * project or CloudProfile): the message becomes the ProviderConfig's Ready condition (reason
   * `ConfigurationProblem`) and no profile is offered. Read-only; never a secret in the message.
   */
  readOffer?(config: ProviderConfig): Promise<ConfigOffer>;
  observe(target: ClusterTarget): Promise<ClusterObservation>;
  create(target: ClusterTarget, version: string): Promise<void>;
  update(target: ClusterTarget, version: string): Promise<void>;
  delete(target: ClusterTarget): Promise<void>;
  /**
   * Admin access to a cluster that exists and is ready, pointing at its observed endpoint; `undefined`
   * while it is not, or always when `capabilities.adminAccess` is false. Read-only.
   *
   * `observed` (optional, contract 1.3): what `observe` returned for this target moments ago, when the engine
   * has it at hand; a backend may take readiness from it instead of observing again (not ready: `undefined`).
   * Absent, the backend observes itself; a backend built for an older contract ignores it.
   */
  adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined>;
  /**
   * Makes the cluster trust exactly these OIDC issuers (replacing what it trusted before; an empty list
   * trusts none). Declarative and idempotent; required when `capabilities.oidc` is true. The trust may
   * take a few seconds to take effect after it returns.
   */
  trustOidcIssuers?(target: ClusterTarget, issuers: readonly OidcTrust[]): Promise<void>;
  /**
   * Optional (contract 1.5), with {@link importCluster}: what this instance keeps about the cluster outside the
   * infrastructure itself (records, files in its state folder) that another engine needs to serve it, as text
   * entries; `openmcp-engine move` carries it in a Secret to the engine on the other management cluster. Read-only:
   * the cluster keeps running. A backend without the pair is refused by `move`, naming the backend.
   * May hold secrets (it travels in a Secret), but they never appear in logs or messages.
   */
  exportCluster?(target: ClusterTarget): Promise<Readonly<Record<string, string>>>;
  /**
   * Optional (contract 1.5): takes over what {@link exportCluster} gave on the other engine, before this engine
   * first looks at the moved Cluster (`target.uid` is the same on both sides). Idempotent; what this instance
   * already holds about the cluster stays (never older state over newer); creates and deletes nothing.
   */
  importCluster?(target: ClusterTarget, state: Readonly<Record<string, string>>): Promise<void>;
  /**
   * Optional (contract 1.6), with {@link wake}: puts the cluster to sleep. It stops serving and costs (next to)
   * nothing meanwhile, but keeps all it needs to come back as it was: its data, its certificate authority, the keys
   * its tokens are signed with, and its endpoint, so every kubeconfig given out before still works after
   * {@link wake}. Idempotent (asleep already, or going to sleep: nothing changes) and kept across restarts of the
   * engine: a backend that restarts stopped clusters by itself does not restart a hibernated one. May return
   * before the work is done: `observe` reports `hibernating`, then `hibernated`; a sleep in steps whose next step
   * needs another call reports `hibernating` with `outOfDate`, and the engine calls again. `delete` works from every phase
   * of it. Throws while the cluster cannot go to sleep (e.g. it is being created), saying why. A backend that
   * cannot hibernate lacks both methods; the engine then never asks.
   */
  hibernate?(target: ClusterTarget): Promise<void>;
  /**
   * Optional (contract 1.6), with {@link hibernate}: wakes a hibernated cluster on the same data, with the same
   * endpoint and certificate authority. Idempotent (awake already, or waking: nothing changes); `observe` reports
   * `waking`, then `ready` as before the sleep.
   */
  wake?(target: ClusterTarget): Promise<void>;
  /**
   * Optional (contract 1.7), with {@link restore}: takes a snapshot of the cluster's control plane into `snapshot`:
   * everything needed to bring the same control plane back — its store's data as one consistent point in time
   * (etcd's own snapshot), and the certificate authority and service-account signing keys, so kubeconfigs and
   * tokens issued before work against what is restored. The cluster keeps serving. Returns the manifest (files
   * with sha256, size, checksum); a snapshot is written whole or not at all (a kill -9 midway leaves none marked
   * complete, and a call again finishes). Idempotent by `snapshot.name`: a complete snapshot of that name is
   * returned as it is. Throws while the cluster cannot be snapshotted (not ready, asleep), saying why. The files
   * hold keys: they never appear in logs or messages. A backend that cannot snapshot (e.g. `existing`, which does
   * not own the control plane) lacks both methods; the engine then refuses with the reason.
   */
  snapshot?(target: ClusterTarget, snapshot: SnapshotReference): Promise<SnapshotManifest>;
  /**
   * Optional (contract 1.7), with {@link snapshot}: rolls the cluster back to `snapshot` in place: its endpoint and
   * certificate authority stay, its data becomes the snapshot's. Checks the snapshot first and throws
   * {@link SnapshotRejectedError} (nothing changed, not retried) for one that is unfinished or altered
   * (`ChecksumMismatch`), of another cluster (`ForeignSnapshot`) or another backend (`IncompatibleSnapshot`).
   * May return before the cluster serves again: `observe` reports it `provisioning`, then `ready`. Another error
   * may have taken effect or not; the engine calls it again, and a restore again finishes.
   */
  restore?(target: ClusterTarget, snapshot: SnapshotReference): Promise<void>;
  /**
   * Optional (contract 1.8): why a ProviderConfig's `spec.settings` of these values cannot be used by this backend (undefined: they
   * can). Pure and quick, no call to the infrastructure: a settings Rollout asks it before it changes any Cluster.
   * The message names the setting and never repeats a value that may be secret.
   */
  checkSettings?(settings: JsonObject | undefined): string | undefined;
  /** Releases what the instance holds (files, connections). Clusters keep running: a new instance adopts them. */
  close?(): Promise<void>;
  /** Optional (contract 1.5): warm pools — clusters made before any Cluster asks, bound to one later. */
  readonly pools?: PoolSupport;
}

/**
 * Optional (contract 1.5): a backend that keeps warm pools makes clusters keyed by a pool member id of the
 * engine's choosing (not a Cluster's uid) and binds one later to a Cluster. Where the infrastructure cannot
 * rename, the binding is a record: afterwards `observe`, `update`, `delete`, `adminAccess` and
 * `trustOidcIssuers` of that Cluster's target act on the member's cluster, and `create` for it changes
 * nothing. The engine records every claim in the API before it calls {@link PoolSupport.bind}, so a backend
 * needs no locking of its own; every method is idempotent and survives kill -9 at any point.
 *
 * A backend that also offers {@link ClusterBackend.hibernate} and {@link ClusterBackend.wake} (contract 1.6) is
 * asked them for idle members of a sleeping pool (`spec.awake`), with the member's target (`poolMemberTarget`: the
 * member id as uid); a member bound while asleep is woken under the Cluster's target.
 */
export interface PoolSupport {
  /** Makes an unbound cluster `member.id` of `member.version` for `member.pool`; `target` carries the config's settings. */
  createMember(member: PoolMemberSpec, target: ClusterTarget): Promise<void>;
  /** Every member of `pool` the backend holds (bound ones with `boundTo`); members being deleted are left out. */
  listMembers(pool: string): Promise<readonly PoolMemberObservation[]>;
  /** Binds member `id` to the Cluster `target` describes (by `target.uid`); binding it again to the same uid changes nothing. */
  bind(id: string, target: ClusterTarget): Promise<void>;
  /** Deletes member `id`, bound or not, with its binding record; deleting an absent member succeeds. */
  deleteMember(id: string): Promise<void>;
}

/** What the engine asks of one pool member. */
export interface PoolMemberSpec {
  /** The member's key at the backend: `[a-z0-9-]`, unique across pools. */
  readonly id: string;
  /** The ClusterPool it belongs to. */
  readonly pool: string;
  readonly version: string;
}

/** One pool member as the backend holds it. */
export interface PoolMemberObservation extends PoolMemberSpec {
  /** How the cluster is, as {@link ClusterBackend.observe} would say. */
  readonly observation: ClusterObservation;
  /** The Cluster uid it is bound to; absent while it is idle. */
  readonly boundTo?: string;
}

/** Reads one key of a Secret in the controller's management cluster (the runtime performs the read). */
export type SecretReader = (namespace: string, name: string, key: string) => Promise<string | undefined>;

/** What a backend factory is given. */
export interface BackendContext {
  /** A folder only this backend uses, kept across restarts of the controller. */
  readonly stateDirectory: string;
  /** `--backend-option key=value` pairs, for backend-wide settings (per-config ones live in `ProviderConfig.spec.settings`). */
  readonly options: Readonly<Record<string, string>>;
  readonly log: Logger;
  readonly clock: Clock;
  /** For settings that point at Secrets (e.g. a kubeconfig), read through the runtime. */
  readonly readSecret: SecretReader;
}

/**
 * Makes a backend. A backend module (built-in, a file, or a package named by `--backend`) exports one
 * as `createBackend` (or as its default export).
 */
export type BackendFactory = (context: BackendContext) => ClusterBackend | Promise<ClusterBackend>;

/** What a module `--backend` names exports. */
export interface BackendModule {
  /** The contract version the backend was built for; {@link BACKEND_CONTRACT_VERSION} when it was written. */
  readonly contractVersion: BackendContractVersion;
  readonly createBackend: BackendFactory;
}
