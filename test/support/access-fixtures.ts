/** Builders and fast-check arbitraries for AccessRequests, for the pure access tests. */
import fc from "fast-check";
import type {
  AccessRequest,
  OidcAccess,
  PermissionRequest,
  PolicyRule,
  RoleBinding,
  RoleRef,
  Subject,
  TokenAccess,
} from "../../src/api/access-request.ts";
import type { AccessFacts } from "../../src/machines/access-request/machine.ts";
import { accessBaseName } from "../../src/machines/access-request/names.ts";
import { anAccessRequest, stored } from "./builders.ts";

export const UID = "7d3c1a52-0000-4000-8000-000000000001";

/** The base name of the objects on the target cluster for {@link aTokenRequest}'s `my-namespace/my-access`. */
export const TOKEN_REQUEST_BASE = accessBaseName({ namespace: "my-namespace", name: "my-access", uid: UID });
const clusterRef = { name: "my-cluster", namespace: "foo" };

/** An AccessRequest `my-namespace/my-access` for `token`, as preparation leaves it (clusterRef set). */
export function aTokenRequest(token: TokenAccess, uid = UID): AccessRequest {
  return stored(anAccessRequest({ clusterRef, token }), { uid, resourceVersion: undefined });
}

/** An AccessRequest `my-namespace/my-oidc-access` for `oidc`. */
export function anOidcRequest(oidc: OidcAccess, uid = UID): AccessRequest {
  return stored(anAccessRequest({ name: "my-oidc-access", clusterRef, oidc }), {
    uid,
    resourceVersion: undefined,
  });
}

/** The facts of a servable request on a reachable Cluster with nothing made yet; `overrides` change any. */
export function accessFactsWith(overrides: Partial<AccessFacts> = {}): AccessFacts {
  return {
    deleting: false,
    hasFinalizer: false,
    clusterReachable: true,
    targetFailing: false,
    denial: undefined,
    accessInPlace: false,
    accessGone: true,
    secretValid: false,
    missingRoles: [],
    ...overrides,
  };
}

/** The OIDC example of the openMCP contract, without its prefixes (so the defaults apply). */
export function anOidcAccess(overrides: Partial<OidcAccess> = {}): OidcAccess {
  return {
    name: "my-oidc-provider",
    issuer: "https://oidc.example.com",
    clientID: "my-client-id",
    roleBindings: [],
    ...overrides,
  };
}

// ——— Arbitraries: valid input, as invalidRules accepts it ———

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);

/** A role or binding name a user might choose (RBAC allows ':' and upper case). */
export const roleName = fc
  .stringMatching(/^[a-zA-Z0-9][-a-zA-Z0-9:.]{0,15}$/)
  .filter((n) => n !== "." && n !== "..");

const resourceRule: fc.Arbitrary<PolicyRule> = fc.record(
  {
    apiGroups: fc.array(fc.constantFrom("", "*", "apps", "rbac.authorization.k8s.io"), {
      minLength: 1,
      maxLength: 3,
    }),
    resources: fc.array(fc.constantFrom("*", "pods", "pods/log", "secrets", "deployments"), {
      minLength: 1,
      maxLength: 3,
    }),
    resourceNames: fc.array(fc.constantFrom("a", "b"), { maxLength: 2 }),
    verbs: fc.array(fc.constantFrom("*", "get", "list", "watch", "create"), { minLength: 1, maxLength: 4 }),
  },
  { requiredKeys: ["apiGroups", "resources", "verbs"] },
);

const nonResourceRule: fc.Arbitrary<PolicyRule> = fc.record({
  nonResourceURLs: fc.array(fc.constantFrom("/healthz", "/metrics", "/api/*"), {
    minLength: 1,
    maxLength: 2,
  }),
  verbs: fc.array(fc.constantFrom("get", "post"), { minLength: 1, maxLength: 2 }),
});

/** A valid permission (or OIDC role): a ClusterRole (may use nonResourceURLs) or a Role in a namespace. */
export const permission: fc.Arbitrary<PermissionRequest> = fc.oneof(
  fc.record(
    {
      name: roleName,
      rules: fc.array(fc.oneof(resourceRule, nonResourceRule), { minLength: 1, maxLength: 3 }),
    },
    { requiredKeys: ["rules"] },
  ),
  fc.record(
    {
      name: roleName,
      namespace: dnsLabel,
      disableAutomaticNamespaceCreation: fc.boolean(),
      rules: fc.array(resourceRule, { minLength: 1, maxLength: 3 }),
    },
    { requiredKeys: ["namespace", "rules"] },
  ),
);

/** A valid reference to an existing role: a Role in a namespace, a ClusterRole with or without one. */
export const roleRef: fc.Arbitrary<RoleRef> = fc.oneof(
  fc.record({ kind: fc.constant("Role" as const), name: roleName, namespace: dnsLabel }),
  fc.record({ kind: fc.constant("ClusterRole" as const), name: roleName }),
  fc.record({ kind: fc.constant("ClusterRole" as const), name: roleName, namespace: dnsLabel }),
);

/** A token access; may name two permissions alike, which {@link invalidRules} reports. */
export const tokenAccess: fc.Arbitrary<TokenAccess> = fc.record({
  permissions: fc.array(permission, { maxLength: 5 }),
  roleRefs: fc.array(roleRef, { maxLength: 4 }),
});

/** A configured prefix: unset, disabled, with or without the trailing ':'. */
export const configuredPrefix: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant(""),
  fc.stringMatching(/^[a-z][a-z0-9:-]{0,8}$/),
);

/** A subject name as users write them: plain, with a ':' inside, or marked `::` to skip the prefix. */
export const subjectName = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9@._-][a-zA-Z0-9@._:-]{0,15}$/),
  fc.stringMatching(/^::[a-zA-Z0-9@._:-]{1,15}$/),
);

/** A valid subject of an OIDC binding. */
export const subject: fc.Arbitrary<Subject> = fc.oneof(
  fc.record({ kind: fc.constantFrom("User", "Group"), name: subjectName }),
  fc.record({
    kind: fc.constantFrom("User", "Group"),
    name: subjectName,
    apiGroup: fc.constant("rbac.authorization.k8s.io"),
  }),
  fc.record({ kind: fc.constant("ServiceAccount"), name: dnsLabel, namespace: dnsLabel }),
);

const roleBinding: fc.Arbitrary<RoleBinding> = fc.record({
  subjects: fc.array(subject, { maxLength: 3 }),
  roleRefs: fc.array(roleRef, { maxLength: 3 }),
});

/** An OIDC access with any prefix configuration, bindings and roles. */
export const oidcAccess: fc.Arbitrary<OidcAccess> = fc.record(
  {
    name: fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,10}[a-z0-9])?$/).filter((n) => n !== "system"),
    issuer: fc.constant("https://issuer.example.com"),
    clientID: fc.constant("client"),
    usernamePrefix: configuredPrefix,
    groupsPrefix: configuredPrefix,
    extraScopes: fc.array(fc.constantFrom("email", "groups", "offline_access"), { maxLength: 2 }),
    roleBindings: fc.array(roleBinding, { maxLength: 3 }),
    roles: fc.array(permission, { maxLength: 3 }),
  },
  { requiredKeys: ["name", "issuer", "clientID", "roleBindings"] },
);

/** Any UID, including ones that are not UUIDs. */
export const uid = fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 40 }));
