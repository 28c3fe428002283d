/** The capi backend's ProviderConfig settings: defaults, and a clear message for each thing written wrong. */
import { describe, expect, it } from "vitest";
import { capiSettings } from "../../../src/providers/capi-settings.ts";

const minimal = { clusterClass: { namespace: "classes", name: "docker-kubeadm" } };

describe("capiSettings", () => {
  it("defaults the namespace to the class's, one control-plane machine, no workers, no variables, 15 minutes to delete", () => {
    expect(capiSettings(minimal, "capi")).toEqual({
      clusterClass: { namespace: "classes", name: "docker-kubeadm" },
      namespace: "classes",
      controlPlaneReplicas: 1,
      workers: [],
      variables: [],
      labels: {},
      annotations: {},
      deletionTimeoutMs: 900_000,
    });
  });

  it("reads a management cluster's kubeconfig Secret, as the existing backend does", () => {
    const settings = capiSettings(
      { ...minimal, kubeconfigSecretRef: { namespace: "ns", name: "mgmt" } },
      "capi",
    );
    expect(settings.management).toEqual({ namespace: "ns", name: "mgmt", key: "kubeconfig" });
  });

  it.each([
    [{}, "settings.clusterClass must name a ClusterClass"],
    [{ clusterClass: { name: "x" } }, "settings.clusterClass.namespace must be a namespace, not undefined"],
    [
      { ...minimal, namespace: "Not_A_Namespace" },
      'settings.namespace must be the namespace for the CAPI Clusters, not "Not_A_Namespace"',
    ],
    [
      { ...minimal, controlPlane: { replicas: 0 } },
      "settings.controlPlane.replicas must be a whole number of at least 1, not 0",
    ],
    [
      {
        ...minimal,
        workers: [
          { class: "w", name: "md-0" },
          { class: "w", name: "md-0" },
        ],
      },
      "settings.workers[1].name md-0 is used twice",
    ],
    [
      { ...minimal, workers: [{ class: "w", name: "md-0", replicas: -1 }] },
      "settings.workers[0].replicas must be a whole number of at least 0",
    ],
    [{ ...minimal, variables: [{ name: "a" }] }, "settings.variables[0] must be { name, value }"],
    [
      {
        ...minimal,
        variables: [
          { name: "a", value: 1 },
          { name: "a", value: 2 },
        ],
      },
      "variable a is set twice",
    ],
    [
      { ...minimal, deletionTimeoutSeconds: "soon" },
      'settings.deletionTimeoutSeconds must be a whole number of seconds, not "soon"',
    ],
    [{ ...minimal, metadata: { labels: { a: 1 } } }, "settings.metadata.labels must map names to strings"],
  ])("refuses %j naming what is wrong", (settings, message) => {
    expect(() => capiSettings(settings as never, "mine")).toThrow(message);
    expect(() => capiSettings(settings as never, "mine")).toThrow(/^ProviderConfig mine: /);
  });
});
