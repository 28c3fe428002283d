/** The scheduler configuration in the openMCP operator's format: a whole config file, the bare section, and every problem named with its field path. */
import { describe, expect, it } from "vitest";
import type { SchedulerConfig } from "../../../../src/api/scheduler-config.ts";
import { parseSchedulerConfig } from "../../../../src/machines/cluster-request/scheduler-config.ts";

const SOURCE = "/etc/openmcp/config.yaml";

/** An openMCP operator config file: the scheduler section between the other controllers' sections. */
const OPERATOR_CONFIG = `
managedControlPlane:
  mcpClusterPurpose: mcp
  reconcileMCPEveryXDays: 7
accessRequest:
  selector:
    matchLabels:
      openmcp.cloud/managed: "true"
scheduler:
  selectors:
    clusters:
      matchLabels:
        landscape: eu10
      matchExpressions:
        - key: openmcp.cloud/retired
          operator: DoesNotExist
  purposeMappings:
    mcp:
      template:
        metadata:
          namespace: mcp-clusters
          labels:
            landscape: eu10
            metadata.open-control-plane.io/owner: platform-team
        spec:
          profile: gcp.gardener.mcp
          tenancy: Exclusive
    workload:
      tenancyCount: 2
      selector:
        matchExpressions:
          - key: size
            operator: In
            values: [large, xlarge]
      template:
        metadata:
          generateName: workload-
          namespace: workload-clusters
          labels:
            landscape: eu10
            size: large
        spec:
          profile: gcp.gardener.workload
          tenancy: Shared
          kubernetes:
            version: "1.33.3"
    platform:
      tenancyCount: 0
      template:
        metadata:
          name: platform
          namespace: platform-clusters
          labels:
            landscape: eu10
            clusters.openmcp.cloud/delete-without-requests: "false"
        spec:
          profile: gcp.gardener.platform
          tenancy: Shared
          purposes: [platform, onboarding]
`;

function configOf(text: string): SchedulerConfig {
  const result = parseSchedulerConfig(text, SOURCE);
  if ("problems" in result) throw new Error(`unexpected problems:\n${result.problems.join("\n")}`);
  return result.config;
}

function problemsOf(text: string): readonly string[] {
  const result = parseSchedulerConfig(text, SOURCE);
  if (!("problems" in result)) throw new Error(`expected problems for:\n${text}`);
  return result.problems;
}

/** A scheduler section with one mapping `x` whose fields are the given YAML lines (indented under it). */
function withMapping(...lines: string[]): string {
  return `scheduler:\n  purposeMappings:\n    x:\n${lines.map((line) => `      ${line}`).join("\n")}\n`;
}

describe("parseSchedulerConfig", () => {
  it("reads the scheduler section of a whole operator config file, ignores the other sections and fills the defaults", () => {
    expect(configOf(OPERATOR_CONFIG)).toEqual({
      scope: "Cluster",
      strategy: "Balanced",
      selectors: {
        clusters: {
          matchLabels: { landscape: "eu10" },
          matchExpressions: [{ key: "openmcp.cloud/retired", operator: "DoesNotExist" }],
        },
      },
      purposeMappings: {
        mcp: {
          tenancyCount: 0,
          template: {
            metadata: {
              namespace: "mcp-clusters",
              labels: { landscape: "eu10", "metadata.open-control-plane.io/owner": "platform-team" },
            },
            spec: { profile: "gcp.gardener.mcp", tenancy: "Exclusive" },
          },
        },
        workload: {
          tenancyCount: 2,
          selector: { matchExpressions: [{ key: "size", operator: "In", values: ["large", "xlarge"] }] },
          template: {
            metadata: {
              generateName: "workload-",
              namespace: "workload-clusters",
              labels: { landscape: "eu10", size: "large" },
            },
            spec: { profile: "gcp.gardener.workload", tenancy: "Shared", kubernetes: { version: "1.33.3" } },
          },
        },
        platform: {
          tenancyCount: 0,
          template: {
            metadata: {
              name: "platform",
              namespace: "platform-clusters",
              labels: { landscape: "eu10", "clusters.openmcp.cloud/delete-without-requests": "false" },
            },
            spec: {
              profile: "gcp.gardener.platform",
              tenancy: "Shared",
              purposes: ["platform", "onboarding"],
            },
          },
        },
      },
    } satisfies SchedulerConfig);
  });

  it("reads the bare section, without scheduler:, the same way", () => {
    const bare = `
scope: Namespaced
strategy: BalancedIgnoreEmpty
purposeMappings:
  mcp:
    template:
      spec: {profile: gcp.gardener.mcp, tenancy: Exclusive}
`;
    expect(configOf(bare)).toEqual({
      scope: "Namespaced",
      strategy: "BalancedIgnoreEmpty",
      selectors: {},
      purposeMappings: {
        // No metadata in the file is empty metadata (openMCP embeds it): the scheduler reads it unguarded.
        mcp: {
          tenancyCount: 0,
          template: { metadata: {}, spec: { profile: "gcp.gardener.mcp", tenancy: "Exclusive" } },
        },
      },
    });
    const wrapped = `scheduler:\n${bare
      .split("\n")
      .map((line) => `  ${line}`)
      .join("\n")}`;
    expect(configOf(wrapped)).toEqual(configOf(bare));
  });

  it("takes every strategy and scope the operator knows", () => {
    for (const strategy of ["Balanced", "BalancedIgnoreEmpty", "Random", "Simple"]) {
      for (const scope of ["Cluster", "Namespaced"]) {
        const config = configOf(`scheduler:\n  scope: ${scope}\n  strategy: ${strategy}\n`);
        expect([config.scope, config.strategy]).toEqual([scope, strategy]);
      }
    }
  });

  it("reads an empty file, or an empty scheduler section, as no purposes with the defaults", () => {
    const empty = { scope: "Cluster", strategy: "Balanced", selectors: {}, purposeMappings: {} };
    expect(configOf("")).toEqual(empty);
    expect(configOf("scheduler:\n")).toEqual(empty);
    expect(configOf("managedControlPlane:\n  mcpClusterPurpose: mcp\nscheduler: {}\n")).toEqual(empty);
  });

  it("names a bad scope", () => {
    expect(problemsOf("scheduler:\n  scope: Everywhere\n")).toEqual([
      `${SOURCE}: scheduler.scope: "Everywhere" is not one of Cluster, Namespaced`,
    ]);
  });

  it("names a bad strategy and lists the allowed ones", () => {
    expect(problemsOf("scheduler:\n  strategy: RoundRobin\n")).toEqual([
      `${SOURCE}: scheduler.strategy: "RoundRobin" is not one of Balanced, BalancedIgnoreEmpty, Random, Simple`,
    ]);
  });

  it("uses the bare section's path when there is no scheduler: key", () => {
    expect(problemsOf("strategy: RoundRobin\n")).toEqual([
      `${SOURCE}: (scheduler).strategy: "RoundRobin" is not one of Balanced, BalancedIgnoreEmpty, Random, Simple`,
    ]);
  });

  it("names a negative, fractional or non-numeric tenancyCount", () => {
    const template = "template: {spec: {profile: p, tenancy: Shared}}";
    for (const [count, shown] of [
      ["-1", "-1"],
      ["1.5", "1.5"],
      ['"2"', '"2"'],
    ]) {
      expect(problemsOf(withMapping(`tenancyCount: ${count}`, template))).toEqual([
        `${SOURCE}: scheduler.purposeMappings.x.tenancyCount: ${shown} must be an integer >= 0 (0 = unlimited)`,
      ]);
    }
  });

  it("refuses an Exclusive template with a tenancyCount other than 0", () => {
    expect(
      problemsOf(withMapping("tenancyCount: 2", "template: {spec: {profile: p, tenancy: Exclusive}}")),
    ).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.tenancyCount: must be 0 when the template's tenancy is Exclusive`,
    ]);
    expect(
      configOf(withMapping("tenancyCount: 0", "template: {spec: {profile: p, tenancy: Exclusive}}")),
    ).toBeDefined();
  });

  it("names a missing template, a missing profile and a missing or unknown tenancy", () => {
    expect(problemsOf(withMapping("tenancyCount: 1"))).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template: required (metadata and spec with profile and tenancy)`,
    ]);
    expect(problemsOf(withMapping("template: {spec: {tenancy: Shared}}"))).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template.spec.profile: required`,
    ]);
    expect(problemsOf(withMapping('template: {spec: {profile: "", tenancy: Shared}}'))).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template.spec.profile: required`,
    ]);
    expect(problemsOf(withMapping("template: {spec: {profile: p}}"))).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template.spec.tenancy: required (Exclusive or Shared)`,
    ]);
    expect(problemsOf(withMapping("template: {spec: {profile: p, tenancy: Dedicated}}"))).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template.spec.tenancy: "Dedicated" is not one of Exclusive, Shared`,
    ]);
  });

  it("refuses template labels the global cluster selector does not match", () => {
    const text = `
scheduler:
  selectors:
    clusters:
      matchLabels: {landscape: eu10}
  purposeMappings:
    mcp:
      template:
        metadata: {labels: {landscape: us10}}
        spec: {profile: p, tenancy: Exclusive}
    workload:
      template:
        spec: {profile: p, tenancy: Shared}
`;
    expect(problemsOf(text)).toEqual([
      `${SOURCE}: scheduler.purposeMappings.mcp.template.metadata.labels: do not match the global cluster selector (selectors.clusters)`,
      `${SOURCE}: scheduler.purposeMappings.workload.template.metadata.labels: do not match the global cluster selector (selectors.clusters)`,
    ]);
  });

  it("refuses template labels the purpose's own selector does not match", () => {
    expect(
      problemsOf(
        withMapping(
          "selector: {matchLabels: {size: large}}",
          "template: {metadata: {labels: {size: small}}, spec: {profile: p, tenancy: Shared}}",
        ),
      ),
    ).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template.metadata.labels: do not match this purpose's selector`,
    ]);
  });

  it("names unknown fields, so a typo never passes silently", () => {
    const text = `
scheduler:
  strategy: Simple
  purposeMapings:
    mcp:
      template: {spec: {profile: p, tenancy: Exclusive}}
`;
    expect(problemsOf(text)).toEqual([
      `${SOURCE}: scheduler.purposeMapings: unknown field (scope, strategy, selectors, purposeMappings, purposesServedElsewhere)`,
    ]);
    expect(
      problemsOf(withMapping("tenancycount: 2", "template: {spec: {profile: p, tenancy: Shared}}")),
    ).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.tenancycount: unknown field (tenancyCount, selector, template)`,
    ]);
    expect(problemsOf("scheduler:\n  selectors:\n    cluster: {}\n")).toEqual([
      `${SOURCE}: scheduler.selectors.cluster: unknown field (clusters, requests)`,
    ]);
  });

  it("names unknown fields and non-string labels inside a template", () => {
    const problems = problemsOf(
      withMapping(
        "template:",
        "  metadata: {lables: {a: b}, labels: {on: true}}",
        "  spec: {profile: p, tenancy: Exclusive, purpose: [x]}",
      ),
    );
    expect(problems).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x.template.metadata.lables: unknown field (name, generateName, namespace, labels, annotations)`,
      `${SOURCE}: scheduler.purposeMappings.x.template.spec.purpose: unknown field (profile, tenancy, purposes, kubernetes, clusterConfigs)`,
      `${SOURCE}: scheduler.purposeMappings.x.template.metadata.labels.on: true must be a string (quote it)`,
    ]);
  });

  it("names a file that is not YAML", () => {
    const problems = problemsOf("scheduler:\n  scope: [Cluster\n");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${SOURCE}: not valid YAML: \\S`));
  });

  it("names a document or section of the wrong shape", () => {
    expect(problemsOf("- scheduler\n")).toEqual([`${SOURCE}: must be a YAML mapping`]);
    expect(problemsOf("scheduler: Balanced\n")).toEqual([`${SOURCE}: scheduler must be a mapping`]);
    expect(problemsOf("scheduler:\n  purposeMappings: [mcp]\n")).toEqual([
      `${SOURCE}: scheduler.purposeMappings: must map purposes to definitions`,
    ]);
    expect(problemsOf("scheduler:\n  purposeMappings:\n    x: Exclusive\n")).toEqual([
      `${SOURCE}: scheduler.purposeMappings.x: must be a mapping with tenancyCount, selector and template`,
    ]);
  });

  it("names a selector with In and no values, with its path", () => {
    const text = `
scheduler:
  selectors:
    clusters:
      matchExpressions:
        - key: landscape
          operator: In
  purposeMappings:
    x:
      selector:
        matchExpressions:
          - {key: size, operator: In, values: []}
      template:
        metadata: {labels: {landscape: eu10, size: large}}
        spec: {profile: p, tenancy: Shared}
`;
    const problems = problemsOf(text);
    expect(problems).toContain(
      `${SOURCE}: scheduler.selectors.clusters.matchExpressions[0].values: In needs at least one value`,
    );
    expect(problems).toContain(
      `${SOURCE}: scheduler.purposeMappings.x.selector.matchExpressions[0].values: In needs at least one value`,
    );
  });

  it("refuses names the API server would refuse, or prefixes that leave no room for the hash, naming the field", () => {
    const config = `
purposeMappings:
  Big_Purpose:
    template:
      spec: {profile: p, tenancy: Exclusive}
  long:
    template:
      metadata: {generateName: ${"l".repeat(56)}-, namespace: Not_A_Namespace}
      spec: {profile: p, tenancy: Exclusive}
  shared:
    template:
      metadata: {name: Shared.Cluster}
      spec: {profile: p, tenancy: Shared}
  typed:
    template:
      metadata: {name: 42}
      spec: {profile: p, tenancy: Shared}
  fine:
    tenancyCount: 3
    template:
      metadata: {generateName: ${"f".repeat(54)}-}
      spec: {profile: p, tenancy: Shared}
`;
    expect(problemsOf(config)).toEqual([
      `${SOURCE}: (scheduler).purposeMappings.Big_Purpose.(the purpose, as the name prefix): the Cluster name prefix "Big_Purpose-" may hold only lowercase letters, digits and '-', and starts with a letter or digit`,
      `${SOURCE}: (scheduler).purposeMappings.long.template.metadata.namespace: "Not_A_Namespace" is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)`,
      `${SOURCE}: (scheduler).purposeMappings.long.template.metadata.generateName: the Cluster name prefix "${"l".repeat(56)}-" has 57 characters; at most 55 leave room for the 8-character hash within 63`,
      `${SOURCE}: (scheduler).purposeMappings.shared.template.metadata.name: "Shared.Cluster" is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)`,
      `${SOURCE}: (scheduler).purposeMappings.typed.template.metadata.name: 42 must be a string`,
    ]);
  });

  it("names every problem at once, each with its path", () => {
    const text = `
scheduler:
  scope: Everywhere
  strategy: RoundRobin
  purposeMappings:
    mcp:
      tenancyCount: 2
      template: {spec: {profile: p, tenancy: Exclusive}}
    workload:
      tenancyCount: -1
      template: {spec: {tenancy: Shared}}
`;
    expect(problemsOf(text)).toEqual([
      `${SOURCE}: scheduler.scope: "Everywhere" is not one of Cluster, Namespaced`,
      `${SOURCE}: scheduler.strategy: "RoundRobin" is not one of Balanced, BalancedIgnoreEmpty, Random, Simple`,
      `${SOURCE}: scheduler.purposeMappings.mcp.tenancyCount: must be 0 when the template's tenancy is Exclusive`,
      `${SOURCE}: scheduler.purposeMappings.workload.tenancyCount: -1 must be an integer >= 0 (0 = unlimited)`,
      `${SOURCE}: scheduler.purposeMappings.workload.template.spec.profile: required`,
    ]);
  });

  it("reads the purposes left to another scheduler (openMCP's kcp mode), each once, and names one also mapped here", () => {
    const kcp = `scheduler:\n  purposesServedElsewhere: [onboarding, mcp, mcp]\n${withMapping(
      "template: {spec: {profile: p, tenancy: Exclusive}}",
    )
      .split("\n")
      .slice(1)
      .join("\n")}`;
    expect(configOf(kcp).purposesServedElsewhere).toEqual(["onboarding", "mcp"]);
    expect(configOf("scheduler: {}\n").purposesServedElsewhere).toBeUndefined();
    expect(
      problemsOf(
        `${withMapping("template: {spec: {profile: p, tenancy: Exclusive}}")}  purposesServedElsewhere: [x]\n`,
      ),
    ).toEqual([
      `${SOURCE}: scheduler.purposesServedElsewhere: "x" is also in purposeMappings; a purpose is served here or elsewhere, not both`,
    ]);
    expect(problemsOf("scheduler:\n  purposesServedElsewhere: mcp\n")).toEqual([
      `${SOURCE}: scheduler.purposesServedElsewhere: must be a list of purposes (e.g. [onboarding, mcp] in openMCP's kcp mode)`,
    ]);
  });
});
