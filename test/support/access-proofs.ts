/** Proofs that issued access does exactly what was asked on a real cluster: a token request's rights, an OIDC user's client. */
import { ApiException, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { expect } from "vitest";
import type { AccessRequestSpec, OidcAccess, RoleBinding } from "../../src/api/access-request.ts";
import { reuseConnections } from "../../src/runtime/api-server/connection-reuse.ts";
import { type EventuallyOptions, eventually } from "./eventually.ts";
import { probeJobAnswer } from "./probe-job.ts";

/** The HTTP status a call ends with (200 when it succeeds, -1 when no answer came). */
export const statusOf = (promise: Promise<unknown>): Promise<number> =>
  promise.then(
    () => 200,
    (error: unknown) => (error instanceof ApiException ? error.code : -1),
  );

/** Makes each call in turn and checks it ends with its HTTP status; a failure names the call. */
export async function expectStatuses(
  calls: ReadonlyArray<readonly [call: () => Promise<unknown>, status: number]>,
): Promise<void> {
  for (const [call, status] of calls) expect(await statusOf(call()), String(call)).toBe(status);
}

/** Creates the ConfigMap `name` in `namespace` as `client`. */
export const createConfigMap = (client: CoreV1Api, namespace: string, name: string): Promise<unknown> =>
  client.createNamespacedConfigMap({ namespace, body: { metadata: { name } } });

/** A token AccessRequest for get, list and create of ConfigMaps in `default` on the Cluster `clusterRef`. */
export function configMapTokenRequest(clusterRef: { name: string; namespace: string }): AccessRequestSpec {
  return {
    clusterRef,
    token: {
      permissions: [
        {
          namespace: "default",
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "create"] }],
        },
      ],
    },
  };
}

/** Checks that `kubeConfig` (from a {@link configMapTokenRequest}) may do exactly that: ConfigMaps in `default`, nothing else. */
export async function expectConfigMapAccessOnly(kubeConfig: KubeConfig): Promise<void> {
  const client = kubeConfig.makeApiClient(CoreV1Api);
  expect(
    await statusOf(
      client.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "t" } } }),
    ),
  ).toBe(200);
  expect(await statusOf(client.listNamespacedConfigMap({ namespace: "default" }))).toBe(200);
  expect(await statusOf(client.listNamespacedSecret({ namespace: "default" }))).toBe(403);
  expect(await statusOf(client.listNamespacedConfigMap({ namespace: "kube-system" }))).toBe(403);
  expect(await statusOf(client.listNode())).toBe(403);
}

/**
 * The `oidc` of an AccessRequest trusting `issuer` for `clientID` as `corp`: group `readers` bound to ClusterRole
 * `view` (what {@link expectGroupReader} checks), then `more`.
 */
export function readersOidc(issuer: string, clientID: string, ...more: RoleBinding[]): OidcAccess {
  return {
    name: "corp",
    issuer,
    clientID,
    roleBindings: [
      { subjects: [{ kind: "Group", name: "readers" }], roleRefs: [{ kind: "ClusterRole", name: "view" }] },
      ...more,
    ],
  };
}

/**
 * Waits until `reader`, a member of the group an OIDC AccessRequest binds to ClusterRole `view`, may list ConfigMaps
 * (the cluster's API server loads the request's authentication configuration by itself, within seconds), then
 * checks that it may not read Secrets.
 */
export async function expectGroupReader(
  reader: CoreV1Api,
  what: string,
  options: Omit<EventuallyOptions, "what"> = {},
): Promise<void> {
  await eventually(
    async () => expect(await statusOf(reader.listNamespacedConfigMap({ namespace: "default" }))).toBe(200),
    { what, ...options },
  );
  expect(await statusOf(reader.listNamespacedSecret({ namespace: "default" }))).toBe(403);
}

/** The kubeconfig an AccessRequest's Secret `namespace/name` holds: its text, and loaded. */
export async function issuedKubeconfig(
  core: CoreV1Api,
  namespace: string,
  name: string,
): Promise<{ readonly text: string; readonly kubeConfig: KubeConfig }> {
  const secret = await core.readNamespacedSecret({ namespace, name });
  const text = Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString("utf8");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(text);
  return { text, kubeConfig };
}

/**
 * A kubeconfig for the cluster `admin` points at (or for `server`, trusting `admin`'s CA), authenticated by `token`
 * alone (a ServiceAccount's token, an OIDC ID token). Its requests share one TLS connection, as kubectl's do (a new
 * one per request, client-node's way, cost the tests' polling a handshake each).
 */
export function bearerKubeConfig(
  admin: KubeConfig,
  token: string,
  server = admin.getCurrentCluster()?.server ?? "",
): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "t", server, caData: admin.getCurrentCluster()?.caData }],
    users: [{ name: "u", token }],
    contexts: [{ name: "c", cluster: "t", user: "u" }],
    currentContext: "c",
  });
  return reuseConnections(kubeConfig);
}

/** A client of the cluster `admin` points at, authenticated by `token` alone (e.g. an OIDC ID token). */
export function bearerClient(admin: KubeConfig, token: string): CoreV1Api {
  return bearerKubeConfig(admin, token).makeApiClient(CoreV1Api);
}

/**
 * What a Pod of a cluster gets with the kubeconfig of a {@link configMapTokenRequest}'s Secret `secretName`
 * (mounted): the HTTP statuses of listing ConfigMaps and Secrets in `default` and listing Nodes, by the kubeconfig's
 * own server (from a Pod: the internal endpoint). Runs the engine's image (it has node and yaml) as a Job.
 */
export async function configMapAnswersFromPod(
  cluster: { kubectl(...args: string[]): Promise<string> },
  props: { namespace: string; secretName: string; image: string; job: string; folder: string },
): Promise<unknown> {
  const probe = [
    "const { readFileSync } = require('node:fs');",
    "const { parse } = require('/app/node_modules/yaml');",
    "const k = parse(readFileSync('/access/kubeconfig', 'utf8'));",
    "const server = new URL(k.clusters[0].cluster.server);",
    "const ca = Buffer.from(k.clusters[0].cluster['certificate-authority-data'], 'base64');",
    "const token = k.users[0].user.token;",
    "const get = (path) => new Promise((ok) => require('node:https').get({ host: server.hostname, port: server.port, path, ca, headers: { authorization: 'Bearer ' + token } }, (r) => { r.resume(); ok(r.statusCode); }).on('error', (e) => ok(e.code)));",
    "(async () => console.log(JSON.stringify([await get('/api/v1/namespaces/default/configmaps'), await get('/api/v1/namespaces/default/secrets'), await get('/api/v1/nodes')])))();",
  ].join(" ");
  return probeJobAnswer(cluster, { ...props, mountPath: "/access", probe });
}
