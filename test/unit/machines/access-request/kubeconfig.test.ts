/** Kubeconfigs for granted AccessRequests, and when a token is due for renewal. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { TokenAccess } from "../../../../src/api/access-request.ts";
import {
  grantNamespace,
  oidcKubeconfig,
  renewalDue,
  tokenKubeconfig,
} from "../../../../src/machines/access-request/kubeconfig.ts";
import { anOidcAccess } from "../../../support/access-fixtures.ts";
import { anAccessRequest } from "../../../support/builders.ts";

const CLUSTER = {
  server: "https://10.0.0.1:6443",
  certificateAuthorityData: "LS0tLS1CRUdJTg==",
  clusterName: "my-cluster",
};
const clusters = [
  {
    name: "my-cluster",
    cluster: { server: "https://10.0.0.1:6443", "certificate-authority-data": "LS0tLS1CRUdJTg==" },
  },
];

describe("tokenKubeconfig", () => {
  it("holds the cluster, a token user and a current context joining them", () => {
    const yaml = tokenKubeconfig({
      ...CLUSTER,
      token: "eyJhbGciOi.x-y_z",
      userName: "my-namespace-my-access-1a2b3c4d",
    });
    expect(parse(yaml)).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters,
      users: [{ name: "my-namespace-my-access-1a2b3c4d", user: { token: "eyJhbGciOi.x-y_z" } }],
      contexts: [
        { name: "my-cluster", context: { cluster: "my-cluster", user: "my-namespace-my-access-1a2b3c4d" } },
      ],
      "current-context": "my-cluster",
    });
  });

  it("keeps any token and names intact through YAML", () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 1 }), (token, userName) => {
        const config = parse(tokenKubeconfig({ ...CLUSTER, token, userName }));
        expect(config.users).toEqual([{ name: userName, user: { token } }]);
      }),
    );
  });
});

describe("oidcKubeconfig", () => {
  it("runs the kubectl oidc-login plugin with issuer, client ID and one flag per extra scope", () => {
    const yaml = oidcKubeconfig({ ...CLUSTER, oidc: anOidcAccess({ extraScopes: ["email", "groups"] }) });
    expect(parse(yaml)).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters,
      users: [
        {
          name: "my-oidc-provider",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1beta1",
              command: "kubectl",
              args: [
                "oidc-login",
                "get-token",
                "--oidc-issuer-url=https://oidc.example.com",
                "--oidc-client-id=my-client-id",
                "--oidc-extra-scope=email",
                "--oidc-extra-scope=groups",
              ],
              interactiveMode: "IfAvailable",
            },
          },
        },
      ],
      contexts: [{ name: "my-cluster", context: { cluster: "my-cluster", user: "my-oidc-provider" } }],
      "current-context": "my-cluster",
    });
  });

  it("holds no credential", () => {
    const user = parse(oidcKubeconfig({ ...CLUSTER, oidc: anOidcAccess() })).users[0].user;
    expect(Object.keys(user)).toEqual(["exec"]);
    expect(user.exec.args).toHaveLength(4);
  });
});

describe("grantNamespace", () => {
  const rules = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }];
  const token = (spec: TokenAccess) => anAccessRequest({ name: "r", namespace: "ns", token: spec });

  it("is the one namespace of a grant limited to it, and the kubeconfig's default namespace", () => {
    const one = token({
      permissions: [{ namespace: "team-a", rules }],
      roleRefs: [{ kind: "Role", name: "viewer", namespace: "team-a" }],
    });
    expect(grantNamespace(one)).toBe("team-a");
    const config = parse(tokenKubeconfig({ ...CLUSTER, token: "t", userName: "u", namespace: "team-a" }));
    expect(config.contexts).toEqual([
      { name: "my-cluster", context: { cluster: "my-cluster", user: "u", namespace: "team-a" } },
    ]);
  });

  it("is none for a grant that is cluster-wide anywhere, or spans namespaces, or grants nothing", () => {
    expect(grantNamespace(token({ permissions: [{ rules }] }))).toBeUndefined();
    expect(
      grantNamespace(
        token({
          permissions: [{ namespace: "team-a", rules }],
          roleRefs: [{ kind: "ClusterRole", name: "view" }],
        }),
      ),
    ).toBeUndefined();
    expect(
      grantNamespace(
        token({
          permissions: [
            { namespace: "team-a", rules },
            { namespace: "team-b", rules },
          ],
        }),
      ),
    ).toBeUndefined();
    expect(grantNamespace(token({}))).toBeUndefined();
    // The kubeconfig without one has no namespace, as before.
    const config = parse(tokenKubeconfig({ ...CLUSTER, token: "t", userName: "u" }));
    expect(config.contexts[0].context).toEqual({ cluster: "my-cluster", user: "u" });
  });

  it("is the namespace of an admin scope of one (a tenant of a shared host), whatever the request names", () => {
    const scope = { namespaces: ["tenant-a"] };
    expect(grantNamespace(token({ permissions: [{ namespace: "tenant-a", rules }] }), scope)).toBe(
      "tenant-a",
    );
    expect(grantNamespace(token({}), scope)).toBe("tenant-a");
    expect(grantNamespace(token({}), { namespaces: ["a", "b"] })).toBeUndefined();
  });

  it("counts OIDC role bindings as the token's roles", () => {
    const request = anAccessRequest({
      name: "r",
      namespace: "ns",
      oidc: {
        ...anOidcAccess(),
        roleBindings: [
          {
            subjects: [{ kind: "User", name: "alice" }],
            roleRefs: [{ kind: "Role", name: "x", namespace: "team-a" }],
          },
        ],
      },
    });
    expect(grantNamespace(request)).toBe("team-a");
  });
});

describe("renewalDue", () => {
  const created = 1_000_000;
  const expires = created + 3_600; // one hour

  it("is due once 80% of the validity has passed", () => {
    expect(renewalDue(created, expires, (created + 2_879) * 1_000)).toBe(false);
    expect(renewalDue(created, expires, (created + 2_880) * 1_000)).toBe(true);
    expect(renewalDue(created, expires, (expires + 1) * 1_000)).toBe(true);
  });

  it("takes another fraction", () => {
    expect(renewalDue(created, expires, (created + 1_799) * 1_000, 0.5)).toBe(false);
    expect(renewalDue(created, expires, (created + 1_800) * 1_000, 0.5)).toBe(true);
  });

  it("renews what it cannot reason about, and never what does not expire", () => {
    expect(renewalDue(created, created, created * 1_000 - 1)).toBe(true);
    expect(renewalDue(Number.NaN, expires, 0)).toBe(true);
    expect(renewalDue(created, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it("is monotonic in now: once due, due later too", () => {
    const seconds = fc.integer({ min: 0, max: 4_000_000_000 });
    fc.assert(
      fc.property(
        seconds,
        seconds,
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, b, t1, t2, fraction) => {
          const [early, late] = t1 <= t2 ? [t1, t2] : [t2, t1];
          if (renewalDue(a, b, early, fraction)) expect(renewalDue(a, b, late, fraction)).toBe(true);
        },
      ),
    );
  });
});
