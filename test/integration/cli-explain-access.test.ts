/** `openmcp-engine explain accessrequest` on a real API server: a missing Cluster, a denial, a grant, and never a credential. */
import { readFileSync } from "node:fs";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest, AccessRequestSpec } from "../../src/api/access-request.ts";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { createAccessRequest } from "../support/access-requests.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { explained, explainedField } from "../support/explained.ts";
import { expectRefused, runEngineCli } from "../support/processes.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

let world: World;
let kubeconfig: string;

/**
 * Simulated clusters whose admin access is the world's own API server, so token requests are granted
 * for real (a ServiceAccount token in a real Secret) without a second control plane. No OIDC.
 */
function loopbackBackend(adminKubeconfig: string): ClusterBackend {
  const simulated = new SimulatedBackend({ provisionDelayMs: 300, deleteDelayMs: 200 });
  return {
    name: simulated.name,
    capabilities: { adminAccess: true, oidc: false },
    supportedVersions: (config: ProviderConfig) => simulated.supportedVersions(config),
    traits: (config: ProviderConfig) => simulated.traits(config),
    observe: (target: ClusterTarget) => simulated.observe(target),
    create: (target: ClusterTarget, version: string) => simulated.create(target, version),
    update: (target: ClusterTarget, version: string) => simulated.update(target, version),
    delete: (target: ClusterTarget) => simulated.delete(target),
    adminAccess: async () => ({ kubeconfig: adminKubeconfig }),
  };
}

beforeAll(async () => {
  // The backend needs the API server's kubeconfig: a world with no engine yet, then the engine on it.
  world = await startWorld({ engine: false });
  kubeconfig = world.controlPlane.kubeconfigPath;
  await world.startEngine({
    backend: loopbackBackend(readFileSync(kubeconfig, "utf8")),
    kindSettings: {
      AccessRequest: { timing: { tokenValidityMs: 600_000, pollMs: 200, retryMs: 200, resyncMs: 60_000 } },
    },
  });
  await world.createCluster("web");
  await world.waitFor("web", isReady);
});

afterAll(async () => {
  await world?.stop();
});

async function createRequest(name: string, spec: AccessRequestSpec): Promise<void> {
  await createAccessRequest(world.custom, world.namespace, name, spec);
}

/** The AccessRequest once `predicate` holds for it; fails with the last object seen. */
const waitForRequest = (name: string, predicate: (request: AccessRequest) => boolean) =>
  eventually(
    async () =>
      satisfying(
        (await world.custom.getNamespacedCustomObject({
          ...RESOURCES.AccessRequest,
          namespace: world.namespace,
          name,
        })) as AccessRequest,
        predicate,
      ),
    { what: `AccessRequest ${world.namespace}/${name}: ${String(predicate)}` },
  );

/** What `explain <kind> clusters/<name>` prints. */
const explainedAccess = (name: string, kind = "accessrequest") =>
  explained(kind, `${world.namespace}/${name}`, kubeconfig);

const hasCondition = (type: string, status: string) => (request: AccessRequest) =>
  request.status?.conditions?.some((c) => c.type === type && c.status === status) ?? false;

describe("openmcp-engine explain accessrequest", () => {
  it("tells a request for an unknown Cluster waits for its Cluster reference", async () => {
    await createRequest("lost", {
      clusterRef: { name: "ghost", namespace: world.namespace },
      token: { permissions: [] },
    });
    await waitForRequest("lost", hasCondition("Prepared", "False"));
    const output = await explainedAccess("lost");
    expect(output).toMatch(/^AccessRequest clusters\/lost {2}\(uid [0-9a-f-]+\)$/m);
    expect(explainedField(output, "State:")).toBe("pending  (phase Pending)");
    expect(explainedField(output, "Why:")).toBe(
      "not prepared yet: Cluster clusters/ghost does not exist (retrying)",
    );
    expect(explainedField(output, "Waiting for:")).toMatch(
      /^the Cluster reference to resolve: Cluster clusters\/ghost \(spec\.clusterRef\)/,
    );
    expect(output).toContain("Moves on when (the AccessRequest statechart, in the order it checks):");
    expect(output).toMatch(
      /- the Cluster is Ready, the backend gives access to it, and nothing denies the request\s+→ provisioning {2}\[canGrant\]/,
    );
    expect(output).toMatch(
      /Prepared\s+False\s+InvalidReference\s+\S+Z\s+Cluster clusters\/ghost does not exist/,
    );
  });

  it("tells why an OIDC request is denied, with the Warning Event", async () => {
    await createRequest("oidc", {
      clusterRef: { name: "web", namespace: world.namespace },
      oidc: { name: "corp", issuer: "https://issuer.example.com", clientID: "engine", roleBindings: [] },
    });
    await waitForRequest("oidc", (r) => r.status?.phase === "Denied");
    const output = await explainedAccess("oidc", "AccessRequest");
    expect(explainedField(output, "State:")).toBe("denied  (phase Denied)");
    expect(explainedField(output, "Why:")).toBe(
      "denied: backend simulated cannot set up OIDC trust; request token access instead",
    );
    expect(explainedField(output, "Waiting for:")).toMatch(
      /^a person: remove the cause or change the request/,
    );
    expect(output).toMatch(
      /- the cause of the denial is gone: the request can be served\s+→ pending {2}\[isServable\]/,
    );
    expect(output).toMatch(/AccessGranted\s+False\s+Denied\s+\S+Z\s+backend simulated cannot set up OIDC/);
    expect(output).toMatch(/Warning\s+Denied\s+Access denied: backend simulated cannot set up OIDC trust/);
  });

  it("names the Secret of a granted request and never prints its token, in-process or as a command", async () => {
    await createRequest("reader", {
      clusterRef: { name: "web", namespace: world.namespace },
      token: {
        permissions: [
          { namespace: "team-a", rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] },
        ],
      },
    });
    const granted = await waitForRequest("reader", (r) => r.status?.phase === "Granted");
    expect(granted.status?.secretRef?.name).toBe("reader.kubeconfig");
    const secret = await world.controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: world.namespace, name: "reader.kubeconfig" });
    const accessKubeconfig = Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString("utf8");
    const access = new KubeConfig();
    access.loadFromString(accessKubeconfig);
    const token = access.getCurrentUser()?.token ?? "";
    expect(token.length).toBeGreaterThan(20);

    const output = await explainedAccess("reader", "ar");
    expect(explainedField(output, "State:")).toBe("granted  (phase Granted)");
    expect(explainedField(output, "Why:")).toBe(
      "access granted: the kubeconfig is in Secret reader.kubeconfig in namespace clusters (its contents are not shown)",
    );
    expect(explainedField(output, "Waiting for:")).toMatch(/^nothing: it is Granted/);
    expect(output).toMatch(/Normal\s+Granted\s+Access granted/);

    const run = runEngineCli("explain", "areq", `${world.namespace}/reader`, "--kubeconfig", kubeconfig);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("State:        granted");
    for (const printed of [output, run.stdout, run.stderr]) {
      expect(printed).not.toContain(token);
      expect(printed).not.toContain(token.slice(0, 40));
      expect(printed).not.toMatch(/eyJ[\w-]{10,}/); // no JWT of any kind
      expect(printed).not.toContain(secret.data?.kubeconfig ?? "<none>");
    }
  });

  it("runs as a command with every alias, and says when a request does not exist", () => {
    const explainCli = (kind: string, name: string) =>
      runEngineCli("explain", kind, name, "--kubeconfig", kubeconfig);
    for (const alias of ["accessrequests", "AccessRequest"]) {
      const ok = explainCli(alias, `${world.namespace}/oidc`);
      expect(ok.status).toBe(0);
      expect(ok.stdout).toContain("State:        denied");
    }
    const knownKinds =
      "it knows: cluster, clusters, clusterrequest, clusterrequests, cr, creq, accessrequest, accessrequests, ar, areq";
    const refusals: Array<[kind: string, name: string, status: number, message: string]> = [
      ["ar", `${world.namespace}/nobody`, 1, "AccessRequest clusters/nobody not found"],
      ["pod", "default/x", 2, knownKinds],
    ];
    for (const [kind, name, status, message] of refusals)
      expectRefused(explainCli(kind, name), status, message);
  }, 300_000); // four engine processes, one after the other: 15 s each at CI's load (a 60 s timeout ran out, 2026-11-30)
});
