/** `openmcp-engine explain` on a real API server: state, why, what it waits for, and the Events, for Clusters in several situations. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLUSTER_FINALIZERS } from "../../src/api/constants/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { explained, explainedField } from "../support/explained.ts";
import { expectRefused, runEngineCli } from "../support/processes.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

let world: World;
let kubeconfig: string;

beforeAll(async () => {
  world = await startWorld({
    backend: new SimulatedBackend({ provisionDelayMs: 1_500, deleteDelayMs: 200 }),
  });
  kubeconfig = world.controlPlane.kubeconfigPath;
});

afterAll(async () => {
  await world?.stop();
});

/** What `explain cluster clusters/<name>` prints. */
const explainedCluster = (name: string) => explained("cluster", `${world.namespace}/${name}`, kubeconfig);

describe("openmcp-engine explain", () => {
  it("tells a provisioning Cluster waits for the backend, then a Ready one waits for nothing, with its Events", async () => {
    await world.createCluster("web");
    await world.waitFor("web", (c) => c?.status?.providerStatus?.state === "provisioning");
    const provisioning = await explainedCluster("web");
    expect(explainedField(provisioning, "State:")).toBe("provisioning  (phase Progressing)");
    expect(explainedField(provisioning, "Why:")).toBe("the backend reports provisioning");
    expect(explainedField(provisioning, "Waiting for:")).toContain("the backend to report the cluster ready");
    expect(provisioning).toMatch(
      /- the backend reports the cluster ready with an endpoint\s+→ ready {2}\[backendReady\]/,
    );
    expect(provisioning).toMatch(
      /- the backend has no cluster for it, or reports it incomplete\s+→ provisioning \(again\)/,
    );

    await world.waitFor("web", isReady);
    const ready = await explainedCluster("web");
    expect(ready).toMatch(/^Cluster clusters\/web {2}\(uid [0-9a-f-]+\)$/m);
    expect(explainedField(ready, "State:")).toBe("ready  (phase Ready)");
    expect(explainedField(ready, "Why:")).toMatch(/^ClusterReady: Kubernetes 1\.33\.3 at https:\/\//);
    expect(explainedField(ready, "Waiting for:")).toMatch(/^nothing: it is Ready/);
    expect(ready).toMatch(/ClusterReady\s+True\s+Ready\s+\S+Z\s+Kubernetes 1\.33\.3/);
    const events = ready.slice(ready.indexOf("Recent transitions"));
    expect(events).toMatch(/Normal\s+Provisioning\s+Creating the cluster with Kubernetes 1\.33\.3/);
    expect(events).toMatch(/Normal\s+Ready\s+The cluster is ready with Kubernetes 1\.33\.3/);
    expect(events.indexOf("Provisioning")).toBeLessThan(events.indexOf(" Ready "));
  });

  it("tells an unsupported version is not offered and what a person can do", async () => {
    await world.createCluster("too-old", { kubernetes: { version: "1.20" } });
    await world.waitFor("too-old", (c) => c?.status?.providerStatus?.state === "failed");
    const output = await explainedCluster("too-old");
    expect(explainedField(output, "State:")).toBe("failed  (phase Progressing)");
    expect(explainedField(output, "Why:")).toBe(
      "version not offered: Kubernetes 1.20 is not offered by this profile; supported: 1.33.3, 1.32.7",
    );
    expect(explainedField(output, "Waiting for:")).toBe(
      "a person: set spec.kubernetes.version to one the profile offers (1.33.3, 1.32.7), or delete the Cluster",
    );
    expect(output).toMatch(/Warning\s+Failed\s+Kubernetes 1\.20 is not offered/);
  });

  it("names the finalizers a deletion waits for", async () => {
    await world.createCluster("held", {}, { finalizers: ["example.com/keep"] });
    await world.waitFor("held", isReady);
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: world.namespace,
      name: "held",
    });
    await world.waitFor("held", (c) => c?.status?.providerStatus?.state === "deleting.blocked");
    const output = await explainedCluster("held");
    expect(explainedField(output, "State:")).toBe("deleting.blocked  (phase Terminating)");
    expect(explainedField(output, "Why:")).toBe("waiting for finalizers: example.com/keep");
    expect(explainedField(output, "Waiting for:")).toBe(
      "their owners to remove them; nothing is deleted at the backend until then",
    );
    expect(output).toMatch(/- no other finalizer remains\s+→ deleting\.releasing/);

    // Let go: the engine finishes the deletion.
    const held = await world.readCluster("held");
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: world.namespace,
      name: "held",
      body: [
        { op: "test", path: "/metadata/finalizers", value: held?.metadata.finalizers },
        { op: "replace", path: "/metadata/finalizers", value: [CLUSTER_FINALIZERS.cluster] },
      ],
    });
    await world.waitFor("held", (c) => c === undefined);
  });

  it("tells a missing ClusterProfile", async () => {
    // Named as our profiles are (`<environment>.<provider>.<config>`), so it is ours to report on.
    const missing = `test.${world.provider}.no-such-config`;
    await world.createCluster("orphan", { profile: missing });
    await world.waitFor("orphan", (c) => c?.status?.providerStatus?.state === "pending");
    const output = await explainedCluster("orphan");
    expect(explainedField(output, "Why:")).toBe(`ClusterProfile "${missing}" does not exist`);
    expect(explainedField(output, "Waiting for:")).toMatch(
      new RegExp(`^the ClusterProfile "${missing.replaceAll(".", "\\.")}" to appear`),
    );
  });

  it("runs as a command: --kubeconfig, a clear message and exit 1 for a missing Cluster, exit 2 for bad usage", () => {
    const explainCli = (kind: string, name: string) =>
      runEngineCli("explain", kind, name, "--kubeconfig", kubeconfig);
    const ok = explainCli("Cluster", `${world.namespace}/too-old`);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain("State:        failed");

    const refusals: Array<[kind: string, name: string, status: number, message: string]> = [
      ["cluster", `${world.namespace}/ghost`, 1, "Cluster clusters/ghost not found"],
      ["pod", "default/x", 2, 'explain does not know kind "pod"'],
      ["cluster", "just-a-name", 2, '"just-a-name" must be <namespace>/<name>'],
    ];
    for (const [kind, name, status, message] of refusals)
      expectRefused(explainCli(kind, name), status, message);
  });
});
