/**
 * crds/policies on a real API server: a Cluster labelled for deletion protection is deleted only after the
 * explicit confirmation annotation; a plain delete, a delete of the whole collection and unprotected Clusters
 * behave as the policy says.
 */

import { ApiException, type CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLUSTER_ANNOTATIONS, CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";

const NAMESPACE = "protected";
let controlPlane: ControlPlane | undefined;
let custom: CustomObjectsApi;

beforeAll(async () => {
  ({ controlPlane, custom } = await startApiServerWith(NAMESPACE));
}, 120_000);

afterAll(async () => {
  await controlPlane?.stop();
}, 120_000);

const cluster = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: `${RESOURCES.Cluster.group}/${RESOURCES.Cluster.version}`,
  kind: "Cluster",
  metadata: { name, labels },
  spec: { profile: "p", kubernetes: {}, tenancy: "Exclusive" },
});
const create = (name: string, labels?: Record<string, string>) =>
  custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NAMESPACE,
    body: cluster(name, labels),
  });
const remove = (name: string) =>
  custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE, name });
const names = async () =>
  (
    (await custom.listNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE })) as {
      items: Array<{ metadata: { name: string } }>;
    }
  ).items
    .map((item) => item.metadata.name)
    .sort();
/** The API server's refusal of `attempt`, or undefined when it succeeded. */
const refusal = async (attempt: () => Promise<unknown>) => {
  try {
    await attempt();
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    return { code: error.code, message: JSON.parse(error.body as string).message as string };
  }
};
const PROTECTED = { [CLUSTER_LABELS.deletionProtection]: "true" };

describe("Cluster deletion protection (a ValidatingAdmissionPolicy installed with the CRDs)", () => {
  it("refuses to delete a protected Cluster, naming it and the step that allows it", async () => {
    await create("platform", PROTECTED);
    // The API server loads a new policy within a second or so: wait with dry runs, which admission sees too and
    // which delete nothing while the policy is not loaded yet.
    await eventually(
      async () =>
        (
          await refusal(() =>
            custom.deleteNamespacedCustomObject({
              ...RESOURCES.Cluster,
              namespace: NAMESPACE,
              name: "platform",
              dryRun: "All",
            }),
          )
        )?.code === 403,
      { what: "the policy in effect (a dry-run delete of protected/platform refused)", timeoutMs: 30_000 },
    );
    const refused = (await refusal(() => remove("platform"))) ?? { code: 200, message: "" };
    expect(refused.code).toBe(403);
    expect(refused.message).toContain(
      `Cluster ${NAMESPACE}/platform is protected from deletion (label ${CLUSTER_LABELS.deletionProtection}=true): to delete it, first annotate it ${CLUSTER_ANNOTATIONS.confirmDeletion}=true`,
    );
    expect(await names()).toContain("platform");
  });

  it("deletes an unprotected Cluster and refuses a protected one in a delete of the whole collection", async () => {
    await create("workload");
    expect(await refusal(() => remove("workload"))).toBeUndefined();
    await create("onboarding");
    const refused = await refusal(() =>
      custom.deleteCollectionNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE }),
    );
    expect(refused?.code).toBe(403);
    expect(await names()).toContain("platform");
  });

  it('a confirmation other than "true" is no confirmation; with it, the delete goes through', async () => {
    const annotate = (value: string) =>
      custom.patchNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NAMESPACE,
        name: "platform",
        body: [
          {
            op: "add",
            path: "/metadata/annotations",
            value: { [CLUSTER_ANNOTATIONS.confirmDeletion]: value },
          },
        ],
      });
    await annotate("yes");
    expect((await refusal(() => remove("platform")))?.code).toBe(403);
    await annotate("true");
    expect(await refusal(() => remove("platform"))).toBeUndefined();
    expect(await names()).not.toContain("platform");
  });
});
