/** Names and owner labels of the objects an AccessRequest gets on its target cluster. Pure and deterministic. */
import { createHash } from "node:crypto";
import type { AccessRequest, PermissionRequest } from "../../api/access-request.ts";
import { ACCESS_REQUEST_LABELS } from "../../api/constants/access-request.ts";
import { ENGINE_GROUP, LABELS, MANAGED_BY_ENGINE } from "../../api/constants.ts";
import { identityUid } from "../../api/move.ts";

/** Namespace on the target cluster where the ServiceAccounts of token access live. */
export const ACCESS_NAMESPACE = "openmcp-access";

/** Label on every object made for an AccessRequest, holding that request's UID: who owns the object. */
export const ACCESS_OWNER_LABEL = ACCESS_REQUEST_LABELS.accessRequestUid;

/**
 * Label on a namespace the engine created on a target for an AccessRequest (it did not exist): the UID of the
 * request it is removed with. Namespaces without it were there before and are never removed.
 */
export const NAMESPACE_CREATOR_LABEL = `${ENGINE_GROUP}/namespace-made-for-access-request`;

/** What names depend on: where the AccessRequest lives and which incarnation of it this is. */
export interface AccessRequestIdentity {
  /** Namespace of the AccessRequest. */
  readonly namespace: string;
  /** Name of the AccessRequest. */
  readonly name: string;
  /** UID of the AccessRequest; a request deleted and created again gets new names. */
  readonly uid: string;
}

/**
 * The identity of an AccessRequest as the API server stores it. Missing metadata (never the case for an object
 * read from the API server) counts as empty text, so the result is still deterministic.
 */
export function accessRequestIdentity(request: Pick<AccessRequest, "metadata">): AccessRequestIdentity {
  const { namespace = "", name = "" } = request.metadata;
  // After a move the first incarnation's uid (see IDENTITY_ANNOTATION): its objects keep their names.
  return { namespace, name, uid: identityUid(request.metadata) };
}

/** Longest DNS-1123 label. */
const MAX_LABEL_LENGTH = 63;
/** Hex characters of sha256(uid) at the end of every base name. */
const HASH_LENGTH = 8;
/** Used when namespace and name leave nothing readable after sanitising. */
const FALLBACK_READABLE = "access";

/**
 * The base of every name made for one AccessRequest: `<namespace>-<name>` made a DNS-1123 label, then `-` and
 * the first 8 hex characters of sha256(uid), e.g. `team-a-my-access-1f0c3a9e`.
 *
 * Flow: lowercase; every run of characters other than `a-z0-9` becomes one `-`; leading and trailing `-` go;
 * the result is cut to 54 characters (and trailing `-` go again) so the whole stays within 63.
 *
 * Guarantees: always a DNS-1123 label (≤ 63 characters, `a-z0-9-`, alphanumeric at both ends), so it is also
 * a valid ServiceAccount name and a valid part of RBAC names; deterministic.
 *
 * Caveats: the readable part is for people only and may be equal for different requests (`a-b`/`c` and
 * `a`/`b-c`, or long names cut alike); telling requests apart rests on the hash of the UID. Eight hex
 * characters are 32 bits, so two live requests whose readable parts are also equal share a name with
 * probability 2⁻³²; {@link ACCESS_OWNER_LABEL} still tells whose an object is (see `rbacDenial`).
 */
export function accessBaseName(request: AccessRequestIdentity): string {
  const readable = sanitise(`${request.namespace}-${request.name}`)
    .slice(0, MAX_LABEL_LENGTH - HASH_LENGTH - 1)
    .replace(/-+$/, "");
  return `${readable || FALLBACK_READABLE}-${uidHash(request.uid)}`;
}

/** Name of the ServiceAccount of a token access, in {@link ACCESS_NAMESPACE}: the base name. */
export function serviceAccountName(request: AccessRequestIdentity): string {
  return accessBaseName(request);
}

/**
 * Name of the Role or ClusterRole made for `permission` (entry `index` of `token.permissions` or `oidc.roles`),
 * and of the binding that binds it: the user's `permission.name` when set and not empty, else
 * `openmcp:<base>:p<index>`.
 */
export function permissionName(
  request: AccessRequestIdentity,
  index: number,
  permission: PermissionRequest,
): string {
  return permission.name ? permission.name : `openmcp:${accessBaseName(request)}:p${index}`;
}

/** Name of the binding of entry `index` of `token.roleRefs`: `openmcp:<base>:ref<index>`. */
export function roleRefBindingName(request: AccessRequestIdentity, index: number): string {
  return `openmcp:${accessBaseName(request)}:ref${index}`;
}

/**
 * Name of the binding of `oidc.roleBindings[bindingIndex].roleRefs[roleRefIndex]`:
 * `openmcp:<base>:oidc<bindingIndex>-<roleRefIndex>`.
 */
export function oidcBindingName(
  request: AccessRequestIdentity,
  bindingIndex: number,
  roleRefIndex: number,
): string {
  return `openmcp:${accessBaseName(request)}:oidc${bindingIndex}-${roleRefIndex}`;
}

/**
 * The labels of every object made for the request: {@link ACCESS_OWNER_LABEL} with its UID, and
 * `app.kubernetes.io/managed-by: openmcp-engine`.
 */
export function accessLabels(request: AccessRequestIdentity): Readonly<Record<string, string>> {
  return { [ACCESS_OWNER_LABEL]: request.uid, [LABELS.managedBy]: MANAGED_BY_ENGINE };
}

/** Lowercase alphanumerics with single `-` between runs, nothing else, no `-` at either end. */
function sanitise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

function uidHash(uid: string): string {
  return createHash("sha256").update(uid).digest("hex").slice(0, HASH_LENGTH);
}
