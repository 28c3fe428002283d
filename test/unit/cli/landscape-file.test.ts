import { describe, expect, it } from "vitest";
import {
  checkLandscape,
  DEFAULT_PURPOSES,
  LandscapeFileError,
  parseLandscapeFile,
} from "../../../src/cli/landscape/landscape-file.ts";

const minimal = `apiVersion: engine.openmcp.cloud/v1alpha1
kind: Landscape
metadata: { name: local }
spec:
  backend: kind
`;

const problemsOf = (text: string): readonly string[] => {
  try {
    parseLandscapeFile(text, "landscape.yaml");
  } catch (error) {
    if (error instanceof LandscapeFileError) return error.problems;
    throw error;
  }
  throw new Error("expected the file to be refused");
};

describe("the landscape file", () => {
  it("fills in openMCP's four purposes, the backend's name as provider and config name, environment default", () => {
    expect(parseLandscapeFile(minimal, "landscape.yaml")).toEqual({
      name: "local",
      backend: "kind",
      providerName: "kind",
      environment: "default",
      backendOptions: {},
      providerConfig: { name: "kind", spec: { backend: "kind" } },
      purposes: DEFAULT_PURPOSES.map((name) => ({ name })),
      secrets: [],
    });
  });

  it("takes Secrets from files and names a Secret without files or with a key that cannot be one", () => {
    const landscape = parseLandscapeFile(
      `${minimal}  secrets:\n    - {name: garden, files: {kubeconfig: ./garden.kubeconfig}}\n    - {name: other, namespace: team-a, files: {token: t}}\n`,
      "landscape.yaml",
    );
    expect(landscape.secrets).toEqual([
      { name: "garden", files: { kubeconfig: "./garden.kubeconfig" } },
      { name: "other", namespace: "team-a", files: { token: "t" } },
    ]);
    expect(
      problemsOf(`${minimal}  secrets:\n    - {name: garden}\n    - {name: x, files: {"a/b": f}}\n`),
    ).toEqual([
      "spec.secrets[0].files must name at least one key and its file",
      "spec.secrets[1].files.a/b: not a Secret key (letters, digits, '-', '_', '.')",
    ]);
  });

  it("takes shared clusters, options and the config's spec; the platform comes first whatever the order", () => {
    const landscape = parseLandscapeFile(
      `${minimal}  providerName: kind-provider
  environment: dev
  backendOptions: { parallelCreates: 2, metallb: true }
  providerConfig:
    name: small
    spec: { supportedVersions: [{ version: 1.36.3 }] }
  purposes:
    - mcp
    - name: platform
    - name: onboarding
      cluster: platform
`,
      "landscape.yaml",
    );
    expect(landscape).toMatchObject({
      providerName: "kind-provider",
      environment: "dev",
      backendOptions: { parallelCreates: "2", metallb: "true" },
      providerConfig: {
        name: "small",
        spec: { backend: "kind", supportedVersions: [{ version: "1.36.3" }] },
      },
      purposes: [{ name: "platform" }, { name: "mcp" }, { name: "onboarding", sharesClusterOf: "platform" }],
    });
  });

  it("names every wrong field in one error", () => {
    expect(
      problemsOf(`apiVersion: v1
kind: Landscape
metadata: { name: Local }
spec:
  providerConfig: { spec: { backend: gardener } }
`),
    ).toEqual([
      'apiVersion must be engine.openmcp.cloud/v1alpha1, found "v1"',
      "metadata.name must be a DNS label (lower case letters, digits and '-'), found \"Local\"",
      "spec.backend is missing (e.g. kind, gardener or local)",
    ]);
    expect(problemsOf(`${minimal}  providerConfig: { spec: { backend: gardener } }\n`)).toEqual([
      'spec.providerConfig.spec.backend is "gardener", but spec.backend is "kind": leave it out',
    ]);
  });

  it("refuses purposes without the platform, listed twice, or sharing a cluster that is not there", () => {
    expect(problemsOf(`${minimal}  purposes: [mcp]\n`)).toEqual([
      "spec.purposes must include platform: the engine runs in its cluster",
    ]);
    expect(problemsOf(`${minimal}  purposes: [platform, mcp, mcp]\n`)).toEqual([
      "spec.purposes[2].name: purpose mcp is listed twice",
    ]);
    expect(
      problemsOf(
        `${minimal}  purposes: [{ name: onboarding, cluster: workload }, platform, { name: workload, cluster: platform }]\n`,
      ),
    ).toEqual([
      'spec.purposes[0].cluster: "workload" is not a purpose listed before it with a cluster of its own (none yet)',
    ]);
    expect(problemsOf(`${minimal}  purposes: [{ name: mcp }, { name: platform, cluster: mcp }]\n`)).toEqual([
      "spec.purposes[1].cluster: the platform purpose has a cluster of its own (the engine runs there)",
      "spec.purposes must include platform: the engine runs in its cluster",
    ]);
  });

  it("says what is not YAML, and refuses a document that is not a mapping", () => {
    expect(problemsOf("spec: [")[0]).toMatch(/^not YAML: /);
    expect(() => checkLandscape([], "x")).toThrow("x: expected one YAML mapping (a Landscape)");
  });
});
