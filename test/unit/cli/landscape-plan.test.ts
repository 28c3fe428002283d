import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAllYaml } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CLUSTER_LABELS } from "../../../src/api/constants/cluster.ts";
import { CLUSTER_REQUEST_LABELS } from "../../../src/api/constants/cluster-request.ts";
import { parseLandscapeFile } from "../../../src/cli/landscape/landscape-file.ts";
import {
  bootstrapObjects,
  clusterRequests,
  engineManifests,
  enginePlacement,
  type LandscapeHost,
  type Manifest,
  NODE_DOCKER_SOCKET,
  schedulerConfigYaml,
  secretObjects,
} from "../../../src/cli/landscape/landscape-plan.ts";
import { parseSchedulerConfig } from "../../../src/machines/cluster-request/scheduler-config.ts";

const landscape = parseLandscapeFile(
  `apiVersion: engine.openmcp.cloud/v1alpha1
kind: Landscape
metadata: {name: local}
spec:
  backend: kind
  environment: openmcp
  backendOptions: {retryDelay: 10s}
  providerConfig:
    spec: {settings: {images: {"1.36.3": "kindest/node:v1.36.3"}}}
  purposes: [platform, {name: onboarding, cluster: platform}, workload, mcp]
`,
  "landscape.yaml",
);
const host: LandscapeHost = {
  stateFolder: "/var/lib/landscapes/local/state",
  dockerSocket: "/var/run/docker.sock",
  dockerSocketGroup: 998,
  podUser: 1000,
  image: "openmcp-engine:src-0123456789ab",
};
const DEPLOY_BASE = join(import.meta.dirname, "..", "..", "..", "deploy", "base");

/** deploy/base's own files, as `landscape up` reads them. */
function deployBase(): Manifest[] {
  const kustomization = parse(readFileSync(join(DEPLOY_BASE, "kustomization.yaml"), "utf8")) as {
    resources: string[];
  };
  return kustomization.resources
    .filter((file) => file.endsWith(".yaml"))
    .flatMap((file) => loadAllYaml(readFileSync(join(DEPLOY_BASE, file), "utf8")) as Manifest[]);
}

describe("what landscape up writes", () => {
  it("gives only the platform's config the host's Docker socket and the state folder, and protects the platform Cluster", () => {
    const objects = bootstrapObjects(landscape, host) as unknown as Array<Record<string, never>>;
    const configs = objects.filter((o) => o.kind === "ProviderConfig") as unknown as Array<{
      metadata: { name: string };
      spec: { providerRef: { name: string }; settings: Record<string, unknown> };
    }>;
    expect(configs.map((c) => c.metadata.name)).toEqual(["kind", "kind-platform"]);
    expect(configs[0]?.spec.settings.extraMounts).toBeUndefined();
    expect(configs[1]?.spec.settings.extraMounts).toEqual([
      { hostPath: "/var/run/docker.sock", containerPath: NODE_DOCKER_SOCKET },
      { hostPath: host.stateFolder, containerPath: host.stateFolder },
    ]);
    expect(configs[1]?.spec.settings.images).toEqual({ "1.36.3": "kindest/node:v1.36.3" });
    expect(configs.every((c) => c.spec.providerRef.name === "kind")).toBe(true);
    const platform = objects.find((o) => o.kind === "Cluster") as unknown as {
      metadata: { labels: Record<string, string> };
      spec: { profile: string; tenancy: string; purposes: string[] };
    };
    expect(platform.metadata.labels[CLUSTER_LABELS.deletionProtection]).toBe("true");
    expect(platform.metadata.labels[CLUSTER_REQUEST_LABELS.deleteWithoutRequests]).toBe("false");
    expect(platform.spec).toEqual({
      profile: "openmcp.kind.kind-platform",
      tenancy: "Shared",
      purposes: ["platform", "onboarding"],
    });
  });

  it("writes a scheduler configuration the engine's scheduler takes: shared purposes on one cluster, mcp Exclusive", () => {
    const parsed = parseSchedulerConfig(schedulerConfigYaml(landscape), "landscape");
    if (!("config" in parsed)) throw new Error(parsed.problems.join("; "));
    const mappings = parsed.config.purposeMappings;
    expect(Object.keys(mappings).sort()).toEqual(["mcp", "onboarding", "platform", "workload"]);
    expect(mappings.platform?.template.spec).toMatchObject({
      profile: "openmcp.kind.kind-platform",
      tenancy: "Shared",
      purposes: ["platform", "onboarding"],
    });
    expect(mappings.onboarding).toEqual(mappings.platform);
    expect(mappings.mcp?.template.spec).toMatchObject({ profile: "openmcp.kind.kind", tenancy: "Exclusive" });
    expect(mappings.workload?.tenancyCount).toBe(20);
  });

  it("runs the engine in a Pod on kind and as a process on gardener, whose platform config mounts nothing", () => {
    expect(enginePlacement(landscape)).toBe("pod");
    const garden = parseLandscapeFile(
      `apiVersion: engine.openmcp.cloud/v1alpha1
kind: Landscape
metadata: {name: garden}
spec:
  backend: gardener
  providerConfig: {spec: {settings: {project: dev, kubeconfigSecretRef: {namespace: openmcp-landscape, name: garden}}}}
  secrets: [{name: garden, files: {kubeconfig: garden.kubeconfig}}]
`,
      "landscape.yaml",
    );
    expect(enginePlacement(garden)).toBe("process");
    const secrets = secretObjects(garden, (path) => `text of ${path}`);
    expect(secrets).toEqual([
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "garden", namespace: "openmcp-landscape" },
        stringData: { kubeconfig: "text of garden.kubeconfig" },
      },
    ]);
    const objects = bootstrapObjects(garden, undefined, secrets) as unknown as Array<{
      kind: string;
      metadata: { name: string };
      spec?: { settings?: Record<string, unknown> };
    }>;
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "Namespace/openmcp-landscape",
      "Secret/garden",
      "ProviderConfig/gardener",
      "ProviderConfig/gardener-platform",
      "Cluster/platform",
    ]);
    expect(objects[3]?.spec?.settings).toEqual({
      project: "dev",
      kubeconfigSecretRef: { namespace: "openmcp-landscape", name: "garden" },
    });
  });

  it("asks for the purposes with a cluster of their own first", () => {
    expect(clusterRequests(landscape).map((r) => r.spec.purpose)).toEqual([
      "platform",
      "workload",
      "mcp",
      "onboarding",
    ]);
  });

  it("runs deploy/base's engine with the landscape's provider, the host's socket group and the state folder at its host path", () => {
    const objects = engineManifests(landscape, host, deployBase()) as unknown as Array<Record<string, never>>;
    expect(objects.filter((o) => o.kind === "ConfigMap")).toHaveLength(1);
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: {
        template: {
          spec: {
            securityContext: Record<string, unknown>;
            containers: Array<{ image: string; args: string[]; volumeMounts: Array<Record<string, string>> }>;
            volumes: Array<Record<string, unknown>>;
          };
        };
      };
    };
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsUser: 1000,
      runAsNonRoot: true,
      supplementalGroups: [998],
    });
    const [manager] = pod.containers;
    expect(manager?.image).toBe(host.image);
    expect(manager?.args).toEqual(
      expect.arrayContaining([
        "--provider-name=kind",
        "--environment=openmcp",
        `--state-dir=${host.stateFolder}`,
        "--backend-option=retryDelay=10s",
        "--leader-elect",
      ]),
    );
    expect(manager?.args.filter((arg) => arg.startsWith("--provider-name"))).toHaveLength(1);
    expect(manager?.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: "state", mountPath: host.stateFolder },
        { name: "docker", mountPath: "/var/run/docker.sock" },
      ]),
    );
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        { name: "state", hostPath: { path: host.stateFolder, type: "Directory" } },
        { name: "docker", hostPath: { path: NODE_DOCKER_SOCKET, type: "Socket" } },
      ]),
    );
  });
});
