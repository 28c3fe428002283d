/** What `openmcp-engine capi-components` prints, held against Cluster API's clusterctl provider contract. */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { CAPI_LABELS } from "../../../src/api/cluster-api.ts";
import { engineFlags, parseEngineArgs, runUsage } from "../../../src/cli/run.ts";
import { clusterctlComponents } from "../../support/clusterctl.ts";

const main = join(import.meta.dirname, "..", "..", "..", "src", "cli", "main.ts");
const crds = join(import.meta.dirname, "..", "..", "..", "crds");

/** The printed stream, as clusterctl would read infrastructure-components.yaml. */
function printed(): { text: string; objects: KubernetesObject[] } {
  const result = spawnSync(process.execPath, [main, "capi-components"], { encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return { text: result.stdout, objects: loadAllYaml(result.stdout) as KubernetesObject[] };
}

interface Container {
  readonly name: string;
  readonly args?: string[];
}

describe("the printed Cluster API components (clusterctl contract)", () => {
  const { text, objects } = printed();
  const deployments = objects.filter((object) => object.kind === "Deployment") as unknown as Array<{
    spec: { template: { spec: { containers: Container[] } } };
  }>;

  it("label every object cluster.x-k8s.io/provider: infrastructure-openmcp-engine", () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const object of objects) {
      expect(object.metadata?.labels?.[CAPI_LABELS.provider], `${object.kind} ${object.metadata?.name}`).toBe(
        "infrastructure-openmcp-engine",
      );
    }
  });

  it("hold one Namespace, the target namespace every namespaced object is in", () => {
    const namespaces = objects.filter((object) => object.kind === "Namespace");
    expect(namespaces).toHaveLength(1);
    const clusterWide = new Set([
      "Namespace",
      "CustomResourceDefinition",
      "ClusterRole",
      "ClusterRoleBinding",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ]);
    for (const object of objects.filter((o) => !clusterWide.has(o.kind ?? ""))) {
      expect(object.metadata?.namespace, `${object.kind} ${object.metadata?.name}`).toBe(
        namespaces[0]?.metadata?.name,
      );
    }
  });

  it("run the controller in a container named manager, with run's flags and --capi", () => {
    expect(deployments).toHaveLength(1);
    const containers = deployments[0]?.spec.template.spec.containers ?? [];
    expect(containers.map((container) => container.name)).toEqual(["manager"]);
    const [command, ...args] = containers[0]?.args ?? [];
    expect(command).toBe("run");
    expect(args).toContain("--capi");
    // The flags parse as `run` parses them, and so do the watch flags the contract asks every manager to
    // take: clusterctl installs providers watching every namespace (--namespace="").
    const flags = engineFlags(
      parseEngineArgs([...args, "--namespace=", "--watch-filter="], runUsage),
      runUsage,
      {},
      {},
    );
    expect(flags).toMatchObject({ capi: true, namespace: undefined, watchFilter: undefined });
    expect(
      engineFlags(
        parseEngineArgs([...args, "--namespace=team-a", "--watch-filter=blue"], runUsage),
        runUsage,
      ),
    ).toMatchObject({ namespace: "team-a", watchFilter: "blue" });
  });

  it("mark the CRDs Cluster API reads with the contract label, naming a served version", () => {
    const crds = objects.filter((object) => object.kind === "CustomResourceDefinition") as unknown as Array<{
      metadata: { name: string; labels?: Record<string, string> };
      spec: { versions: Array<{ name: string; served: boolean }> };
    }>;
    const infrastructure = crds.filter((crd) =>
      crd.metadata.name.endsWith(".infrastructure.engine.openmcp.cloud"),
    );
    expect(infrastructure.map((crd) => crd.metadata.name)).toEqual(
      expect.arrayContaining([
        "engineclusters.infrastructure.engine.openmcp.cloud",
        "engineclustertemplates.infrastructure.engine.openmcp.cloud",
      ]),
    );
    for (const crd of infrastructure.filter((c) => !c.metadata.name.startsWith("clusterendpoints."))) {
      const versions = crd.metadata.labels?.[CAPI_LABELS.contract]?.split("_") ?? [];
      expect(versions.length, crd.metadata.name).toBeGreaterThan(0);
      const served = crd.spec.versions.filter((version) => version.served).map((version) => version.name);
      for (const version of versions) expect(served, crd.metadata.name).toContain(version);
    }
  });

  it("carry the control-plane kinds beside the infrastructure ones, each CRD labelled with the v1beta2 contract", () => {
    const crds = objects.filter((object) => object.kind === "CustomResourceDefinition");
    const contract = (name: string) =>
      crds.find((crd) => crd.metadata?.name === name)?.metadata?.labels?.[CAPI_LABELS.contract];
    for (const name of [
      "enginecontrolplanes.controlplane.engine.openmcp.cloud",
      "enginecontrolplanetemplates.controlplane.engine.openmcp.cloud",
      "enginecontrolplaneinfrastructures.infrastructure.engine.openmcp.cloud",
      "enginecontrolplaneinfrastructuretemplates.infrastructure.engine.openmcp.cloud",
    ]) {
      expect(contract(name), name).toBe("v1alpha1");
    }
    const aggregated = objects.find(
      (object) =>
        object.kind === "ClusterRole" && object.metadata?.labels?.[CAPI_LABELS.aggregateToManager] === "true",
    ) as unknown as { rules: Array<{ apiGroups: string[]; resources: string[] }> };
    expect(aggregated.rules).toContainEqual(
      expect.objectContaining({
        apiGroups: ["controlplane.engine.openmcp.cloud"],
        resources: ["enginecontrolplanes", "enginecontrolplanetemplates"],
      }),
    );
  });

  it("need no clusterctl variables (a $-brace reference would have to be set by whoever runs clusterctl init)", () => {
    // drone/envsubst, which clusterctl uses, would read any `${VAR}` here as a variable to substitute.
    expect(text).not.toMatch(/\$\{/);
  });

  it("print the CRDs with the API's field names, as written in crds/ (x-kubernetes-validations, not a client's x_kubernetes_validations)", () => {
    const written = readdirSync(crds)
      .filter((file) => file.endsWith(".yaml"))
      .map((file) => readFileSync(join(crds, file), "utf8").match(/x-kubernetes-[a-z-]+:/g)?.length ?? 0)
      .reduce((a, b) => a + b, 0);
    expect(written).toBeGreaterThan(0);
    expect(text.match(/x-kubernetes-[a-z-]+:/g)?.length).toBe(written);
    expect(text).not.toMatch(/x_kubernetes_/);
  });

  it("follow clusterctl's --target-namespace: nothing names the components' own namespace once clusterctl moved them", () => {
    const moved = clusterctlComponents(text, {
      manifestLabel: "infrastructure-openmcp-engine",
      targetNamespace: "team-a",
    });
    const namespace = objects.find((object) => object.kind === "Namespace")?.metadata?.name ?? "";
    expect(namespace).not.toBe("");
    expect(JSON.stringify(moved)).not.toContain(namespace);
    // The scheduler's ConfigMap is named in the Pod's own namespace, which kubelet expands from POD_NAMESPACE.
    const args = deployments[0]?.spec.template.spec.containers[0]?.args ?? [];
    expect(args).toContain("--scheduler-config-map=$(POD_NAMESPACE)/openmcp-engine-scheduler");
  });
});
