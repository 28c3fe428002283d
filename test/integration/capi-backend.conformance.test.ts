/**
 * The `capi` backend passes the backend conformance kit against Cluster API's own controllers: the core manager,
 * the kubeadm control-plane and bootstrap managers and CAPD, with the `in-memory-kubeadm` ClusterClass — CAPD's
 * in-memory machines, each cluster a simulated API server CAPD serves — because a property test of random call
 * sequences needs many clusters, and Docker machines take minutes each (capi-backend.test.ts proves those).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import * as capi from "../../src/providers/capi.ts";
import { checkBackendConformance } from "../../src/providers/conformance.ts";
import { aProviderConfig } from "../support/builders.ts";
import { inMemoryKubeadmClass } from "../support/capi-classes.ts";
import { type CapiManagement, CLASS_NAMESPACE, startCapiManagement } from "../support/capi-management.ts";

/** Where the kit's CAPI Clusters go. */
const NS = "conformance-capi";
let management: CapiManagement;

beforeAll(async () => {
  management = await startCapiManagement({ classes: inMemoryKubeadmClass(), namespaces: [NS] });
}, 600_000);
afterAll(async () => {
  await management?.stop();
}, 120_000);

/** Records in the state file, CAPI Clusters and Machines still in the namespace. */
async function leftovers(stateDirectory: string): Promise<string[]> {
  let records: Array<{ uid: string; name: string }> = [];
  try {
    records = JSON.parse(readFileSync(join(stateDirectory, "capi.json"), "utf8")).clusters;
  } catch {
    // nothing was ever made
  }
  const machines = (await management.custom.listNamespacedCustomObject({
    group: "cluster.x-k8s.io",
    version: "v1beta2",
    plural: "machines",
    namespace: NS,
  })) as { items: { metadata: { name: string } }[] };
  return [
    ...records.map((r) => `record of ${r.uid} (CAPI Cluster ${r.name})`),
    ...(await management.capiClusters(NS)).map((c) => `CAPI Cluster ${NS}/${c.metadata.name}`),
    ...machines.items.map((m) => `Machine ${NS}/${m.metadata.name}`),
  ];
}

it("passes the conformance kit on Cluster API's in-memory machines", async () => {
  const started = performance.now();
  let created = 0;
  await checkBackendConformance(capi, {
    // Each cluster is a kubeadm control plane on a simulated machine (tens of seconds): few, short sequences.
    numRuns: 3,
    maxCommands: 6,
    readyTimeoutMs: 300_000,
    config: aProviderConfig({
      name: "conformance",
      backend: "capi",
      supportedVersions: [{ version: "1.36.3" }, { version: "1.37.0" }],
      settings: {
        clusterClass: { namespace: CLASS_NAMESPACE, name: "in-memory-kubeadm" },
        namespace: NS,
        variables: [{ name: "team", value: "conformance" }],
      },
    }),
    context: { options: { kubeconfig: management.controlPlane.kubeconfigPath } },
    leftovers,
    // CAPI Clusters not being deleted: never more than the Cluster objects that exist.
    liveClusters: async () => {
      const live = (await management.capiClusters(NS)).filter((c) => !c.metadata.deletionTimestamp);
      created = Math.max(created, live.length);
      return live.length;
    },
  });
  // The kit begins with the plain life of one Cluster: Cluster API made at least one.
  expect(created).toBeGreaterThan(0);
  console.log(`capi conformance: 3 runs in ${Math.round((performance.now() - started) / 1000)} s`);
}, 3_600_000);
