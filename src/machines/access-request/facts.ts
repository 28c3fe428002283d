/**
 * AccessRequest policy, pure: what the runtime saw on the target cluster and in the caches becomes the
 * level-based facts the machine reads, with the denial rules in their order and the token's renewal time.
 */
import type { AccessRequest } from "../../api/access-request.ts";
import type { AdminScope } from "../../api/backend-contract.ts";
import type { SecretObject } from "../../api/common.ts";
import {
  ACCESS_REQUEST_FINALIZERS,
  ACCESS_REQUEST_LABELS,
  ACCESS_REQUEST_REASONS,
  ACCESS_SECRET_KEYS,
} from "../../api/constants/access-request.ts";
import { objectKey } from "../../api/object-key.ts";
import { deletionFacts } from "../shared/finalizer.ts";
import { scopeDenial } from "./admin-scope.ts";
import { renewalDue, renewalTime } from "./kubeconfig.ts";
import type { AccessFacts } from "./machine.ts";
import { oidcIssuerProblem } from "./oidc-issuer.ts";
import { oidcTrustPlan } from "./oidc-trust.ts";
import { type AccessPlan, accessPlan } from "./rbac-plan.ts";
import { type ExistingObject, invalidRules, rbacDenial } from "./rbac-validation.ts";

/** The Secret an AccessRequest's credential is kept in, as the engine reads it. */
export type AccessSecret = SecretObject;

/** An object of ours found on the target cluster. */
export interface OwnedObject {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** What the backend can do for AccessRequests, as the policy needs to know it. */
export interface AccessBackend {
  readonly name: string;
  /** It can give admin access to its clusters (without it no access can be granted at all). */
  readonly adminAccess: boolean;
  /** It can set up OIDC trust on its clusters. */
  readonly oidc: boolean;
}

/** Why a call on the target cluster failed, as data: the reason for the condition, and the API server's words. */
export interface TargetProblem {
  /** `TargetRefused` (401, 403), `TargetUnreachable` (connection, TLS, timeout), `TargetError` (any other answer), `BackendError` (no admin access given). */
  readonly reason: string;
  /** For a person: which Cluster, and what its API server said (a Kubernetes Status, never raw HTTP or a secret). */
  readonly message: string;
  /** Set when a command failed (not a read): the runtime's failure Event told a person already. */
  readonly inCommand?: boolean;
}

/** What the runtime read for one look at an AccessRequest (all I/O done). */
export interface AccessObservation {
  /** Why the target cluster cannot be used yet (not Ready, no admin access); undefined when it can. */
  readonly clusterProblem: string | undefined;
  /** The problem is that the Cluster sleeps (hibernation): granted access stands and is not renewed meanwhile. */
  readonly clusterAsleep?: boolean;
  /**
   * The Cluster is Ready, but a call on its API server failed in this reconcile (reading what is there, or a
   * command): the refusal or the failed connection, for the condition and the Event. `target` is absent when
   * the reads failed.
   */
  readonly targetProblem?: TargetProblem;
  /** What the backend's admin access to the Cluster may do when it is not cluster-admin (contract 1.2); absent: cluster-admin. */
  readonly adminScope?: AdminScope;
  /** The target cluster as read with admin access; absent while `clusterProblem` is set. */
  readonly target?: {
    /** Every object labelled as made for this request. */
    readonly owned: readonly OwnedObject[];
    /** Roles and ClusterRoles on the target that carry the names the request asks for. */
    readonly namedRoles: readonly ExistingObject[];
    /** The roles the request binds by reference (`roleRefs`) that do not exist on the target, in words. */
    readonly missingRoles?: readonly string[];
  };
  /** The Secret named for the request's kubeconfig, as the (labelled) Secret cache holds it. */
  readonly secret: AccessSecret | undefined;
  /**
   * The other OIDC requests of this provider on the same Cluster that may be trusted beside this one (not
   * being deleted, not Denied); only read for an OIDC request.
   */
  readonly oidcPeers?: readonly AccessRequest[];
}

/** The longest name a Secret may have (a DNS-1123 subdomain). */
const MAX_SECRET_NAME_LENGTH = 253;

/** The Secret with the kubeconfig: named after the request, in its namespace. */
export function accessSecretName(request: Pick<AccessRequest, "metadata">): string {
  return `${request.metadata.name}.kubeconfig`;
}

/**
 * The RBAC objects the request asks for, planned once per reconcile, with the ServiceAccount in the scope's
 * access namespace when the admin access is namespaced; undefined when it asks for nothing.
 */
export function accessPlanOf(request: AccessRequest, scope?: AdminScope): AccessPlan | undefined {
  if (!request.spec.token && !request.spec.oidc) return undefined;
  return scope ? accessPlan(request, scope.accessNamespace) : accessPlan(request);
}

/**
 * Why the request cannot be served as asked, first reason first: a backend that gives no access to its
 * clusters at all (simulated ones are not real), OIDC on a backend without OIDC trust,
 * rules that make no sense, an OIDC issuer kube-apiserver would refuse, an issuer and client ID another
 * request has with other claims or prefixes, a name too long for its Secret's, a Secret of that name that
 * is someone else's, a named Role
 * that exists and is not ours (never a takeover). Undefined when it can be served.
 */
export function accessDenial(
  request: AccessRequest,
  observation: AccessObservation,
  backend: AccessBackend,
  plan: AccessPlan | undefined,
): string | undefined {
  if (!backend.adminAccess) {
    return `backend ${backend.name} gives no access to its clusters, so no AccessRequest can be granted on them; use a backend that does (local, kind, existing)`;
  }
  if (request.spec.oidc && !backend.oidc) {
    return `backend ${backend.name} cannot set up OIDC trust; request token access instead`;
  }
  const invalid =
    invalidRules(request) ??
    oidcProblem(request, observation.oidcPeers ?? []) ??
    scopeDenial(request, observation.adminScope);
  if (invalid) return invalid;
  const secretName = accessSecretName(request);
  if (secretName.length > MAX_SECRET_NAME_LENGTH) {
    return `the Secret's name ${secretName} would be longer than ${MAX_SECRET_NAME_LENGTH} characters; give the AccessRequest a shorter name`;
  }
  const secret = observation.secret;
  if (secret && secret.metadata.labels?.[ACCESS_REQUEST_LABELS.accessRequestUid] !== request.metadata.uid) {
    return `Secret ${accessSecretName(request)} belongs to another AccessRequest`;
  }
  return observation.target && plan ? rbacDenial(request, observation.target.namedRoles, plan) : undefined;
}

/** Why the request's OIDC issuer cannot be trusted (beside the cluster's other OIDC requests), or undefined. */
function oidcProblem(request: AccessRequest, peers: readonly AccessRequest[]): string | undefined {
  const oidc = request.spec.oidc;
  if (!oidc) return undefined;
  const problem = oidcIssuerProblem(oidc.issuer);
  if (problem) return `spec.oidc.issuer: ${problem}`;
  const self = request.metadata.uid;
  const others = peers.filter((peer) => peer.metadata.uid !== self);
  return oidcTrustPlan([...others, request]).conflicts.get(objectKey(request));
}

/** The facts of one look: the request itself, the target cluster as it is now, and the Secret. */
export function accessFacts(
  request: AccessRequest,
  observation: AccessObservation,
  plan: AccessPlan | undefined,
  backend: AccessBackend,
  nowMs: number,
): AccessFacts {
  const target = observation.target;
  const reachable = target !== undefined && plan !== undefined;
  const secret = observation.secret;
  const denial = accessDenial(request, observation, backend, plan);
  return {
    ...deletionFacts(request.metadata, ACCESS_REQUEST_FINALIZERS.accessRequest),
    clusterReachable: reachable,
    targetFailing: observation.targetProblem !== undefined,
    denial,
    ...(denial !== undefined && scopeDenial(request, observation.adminScope) === denial
      ? { denialReason: ACCESS_REQUEST_REASONS.OutsideAdminScope }
      : {}),
    accessInPlace: reachable && accessInPlace(target.owned, plan),
    accessGone: reachable && target.owned.length === 0,
    secretValid: reachable && secret !== undefined && secretFresh(secret, nowMs),
    missingRoles: reachable ? (target.missingRoles ?? []) : [],
  };
}

const ownedKey = (kind: string, namespace: string | undefined, name: string) =>
  `${kind}/${namespace ?? ""}/${name}`;

/**
 * Whether every planned object exists on the target with exactly the content that grants rights
 * (rules of roles, roleRef and subjects of bindings); other fields may differ.
 */
export function accessInPlace(owned: readonly OwnedObject[], plan: AccessPlan): boolean {
  return accessDifference(owned, plan) === undefined;
}

/** The first planned object that is missing on the target or grants other rights, in words; undefined when none. */
export function accessDifference(owned: readonly OwnedObject[], plan: AccessPlan): string | undefined {
  const byKey = new Map(
    owned.map((object) => [ownedKey(object.kind, object.namespace, object.name), object.body]),
  );
  for (const { object: wanted } of plan.planned) {
    const { namespace, name } = wanted.metadata;
    const what = `${wanted.kind} ${namespace ? `${namespace}/` : ""}${name}`;
    const have = byKey.get(ownedKey(wanted.kind, namespace, name));
    if (!have) return `${what} is missing`;
    const planned = wanted as unknown as Readonly<Record<string, unknown>>;
    for (const field of ["rules", "roleRef", "subjects"] as const) {
      // Wrapped, so that an absent, null and empty field compare equal: the API server stores an empty
      // list as null, and a comparison that never agrees re-applies forever.
      if (
        field in planned &&
        JSON.stringify(normalise({ [field]: have[field] })) !==
          JSON.stringify(normalise({ [field]: planned[field] }))
      ) {
        return `${what} has other ${field} than planned`;
      }
    }
  }
  return undefined;
}

/** Drops undefined, null and empty optional fields and sorts keys, so typed (client) and planned objects compare equal. */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, normalise(v)]);
    return Object.fromEntries(entries);
  }
  return value;
}

/** Issue and expiry (Unix seconds) of the token in an access Secret; undefined when it has none (OIDC). */
export function tokenTimes(secret: AccessSecret): { created: number; expires: number } | undefined {
  const read = (key: string) => {
    const value = secret.data?.[key];
    return value ? Number(Buffer.from(value, "base64").toString("utf8")) : Number.NaN;
  };
  const created = read(ACCESS_SECRET_KEYS.creationTimestamp);
  const expires = read(ACCESS_SECRET_KEYS.expirationTimestamp);
  return Number.isFinite(created) && Number.isFinite(expires) ? { created, expires } : undefined;
}

/** Whether the Secret holds a kubeconfig whose token is not yet due for renewal (an OIDC login never is). */
export function secretFresh(secret: AccessSecret, nowMs: number): boolean {
  if (!secret.data?.[ACCESS_SECRET_KEYS.kubeconfig]) return false;
  const times = tokenTimes(secret);
  return times === undefined || !renewalDue(times.created, times.expires, nowMs);
}

/** Milliseconds until the Secret's token is due for renewal; undefined when it holds none. */
export function untilRenewal(secret: AccessSecret | undefined, nowMs: number): number | undefined {
  const times = secret ? tokenTimes(secret) : undefined;
  return times ? renewalTime(times.created, times.expires) - nowMs : undefined;
}
