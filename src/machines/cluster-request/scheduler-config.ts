/**
 * Reads the scheduler configuration in the openMCP operator's format (the `scheduler:` section of its
 * config file, or that section's content alone), fills defaults and checks it as the operator does —
 * plus unknown fields, so a typo never passes silently. Pure.
 */
import { parse } from "yaml";
import { TENANCIES } from "../../api/constants/cluster.ts";
import type {
  ClusterTemplate,
  LabelSelector,
  PurposeMapping,
  SchedulerConfig,
  SchedulerScope,
  SchedulerStrategy,
} from "../../api/scheduler-config.ts";
import { SCHEDULER_STRATEGIES } from "../../api/scheduler-config.ts";
import { selectorMatches, selectorProblems } from "../shared/label-selector.ts";
import {
  clusterNameProblem,
  perRequestPrefix,
  perRequestPrefixProblem,
  singletonClusterName,
} from "./cluster-names.ts";

const SCOPES: readonly SchedulerScope[] = ["Cluster", "Namespaced"];
const SCHEDULER_FIELDS = ["scope", "strategy", "selectors", "purposeMappings", "purposesServedElsewhere"];
const TEMPLATE_FIELDS = ["metadata", "spec"];
const TEMPLATE_METADATA_FIELDS = ["name", "generateName", "namespace", "labels", "annotations"];
const TEMPLATE_SPEC_FIELDS = ["profile", "tenancy", "purposes", "kubernetes", "clusterConfigs"];

/** Reports every key of `fields` that is not one of `known`. */
function unknownFields(fields: Fields, known: readonly string[], path: string, problems: string[]): void {
  for (const key of Object.keys(fields)) {
    if (!known.includes(key)) problems.push(`${path}.${key}: unknown field (${known.join(", ")})`);
  }
}

type Fields = Record<string, unknown>;
const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The configuration in `text`, or every problem found, each with its field path. A document with a
 * top-level `scheduler:` key is an operator config file (other sections ignored); one without is the
 * scheduler section itself.
 */
export function parseSchedulerConfig(
  text: string,
  source: string,
): { readonly config: SchedulerConfig } | { readonly problems: readonly string[] } {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    return { problems: [`${source}: not valid YAML: ${(error as Error).message.split("\n")[0]}`] };
  }
  if (document === null || document === undefined) document = {};
  if (!isObject(document)) return { problems: [`${source}: must be a YAML mapping`] };
  const section = "scheduler" in document ? document.scheduler : document;
  const path = "scheduler" in document ? "scheduler" : "(scheduler)";
  if (section !== null && section !== undefined && !isObject(section)) {
    return { problems: [`${source}: ${path} must be a mapping`] };
  }
  const problems: string[] = [];
  const config = readScheduler(section ?? {}, path, problems);
  return problems.length > 0 ? { problems: problems.map((problem) => `${source}: ${problem}`) } : { config };
}

function readScheduler(section: Fields, path: string, problems: string[]): SchedulerConfig {
  for (const key of Object.keys(section)) {
    if (!SCHEDULER_FIELDS.includes(key))
      problems.push(`${path}.${key}: unknown field (${SCHEDULER_FIELDS.join(", ")})`);
  }
  const scope = (section.scope ?? "Cluster") as SchedulerScope;
  if (!SCOPES.includes(scope))
    problems.push(`${path}.scope: ${JSON.stringify(scope)} is not one of ${SCOPES.join(", ")}`);
  const strategy = (section.strategy ?? "Balanced") as SchedulerStrategy;
  if (!SCHEDULER_STRATEGIES.includes(strategy)) {
    problems.push(
      `${path}.strategy: ${JSON.stringify(strategy)} is not one of ${SCHEDULER_STRATEGIES.join(", ")}`,
    );
  }
  const selectors = isObject(section.selectors) ? section.selectors : {};
  if (section.selectors !== undefined && !isObject(section.selectors))
    problems.push(`${path}.selectors: must be a mapping`);
  for (const key of Object.keys(selectors)) {
    if (key !== "clusters" && key !== "requests")
      problems.push(`${path}.selectors.${key}: unknown field (clusters, requests)`);
  }
  problems.push(...selectorProblems(selectors.clusters, `${path}.selectors.clusters`));
  problems.push(...selectorProblems(selectors.requests, `${path}.selectors.requests`));
  const clusters = selectors.clusters as LabelSelector | undefined;
  const mappings: Record<string, PurposeMapping> = {};
  if (section.purposeMappings !== undefined && !isObject(section.purposeMappings)) {
    problems.push(`${path}.purposeMappings: must map purposes to definitions`);
  }
  for (const [purpose, definition] of Object.entries(
    isObject(section.purposeMappings) ? section.purposeMappings : {},
  )) {
    const at = `${path}.purposeMappings.${purpose}`;
    if (purpose === "") problems.push(`${path}.purposeMappings: a purpose must not be empty`);
    if (!isObject(definition)) {
      problems.push(`${at}: must be a mapping with tenancyCount, selector and template`);
      continue;
    }
    const mapping = readMapping(definition, at, clusters, problems);
    if (mapping) {
      problems.push(...nameProblems(mapping, purpose, at));
      mappings[purpose] = mapping;
    }
  }
  const elsewhere = readPurposesServedElsewhere(section.purposesServedElsewhere, mappings, path, problems);
  return {
    scope,
    strategy,
    ...(elsewhere.length > 0 ? { purposesServedElsewhere: elsewhere } : {}),
    selectors: {
      ...(clusters ? { clusters } : {}),
      ...(selectors.requests ? { requests: selectors.requests as LabelSelector } : {}),
    },
    purposeMappings: mappings,
  };
}

/** The purposes left to another scheduler: a list of distinct purposes, none of them also mapped here. */
function readPurposesServedElsewhere(
  value: unknown,
  mappings: Readonly<Record<string, PurposeMapping>>,
  path: string,
  problems: string[],
): string[] {
  if (value === undefined || value === null) return [];
  const at = `${path}.purposesServedElsewhere`;
  if (!Array.isArray(value) || value.some((purpose) => typeof purpose !== "string" || purpose === "")) {
    problems.push(`${at}: must be a list of purposes (e.g. [onboarding, mcp] in openMCP's kcp mode)`);
    return [];
  }
  const purposes = [...new Set(value as string[])];
  for (const purpose of purposes) {
    if (purpose in mappings)
      problems.push(
        `${at}: "${purpose}" is also in purposeMappings; a purpose is served here or elsewhere, not both`,
      );
  }
  return purposes;
}

function readMapping(
  definition: Fields,
  at: string,
  global: LabelSelector | undefined,
  problems: string[],
): PurposeMapping | undefined {
  for (const key of Object.keys(definition)) {
    if (!["tenancyCount", "selector", "template"].includes(key)) {
      problems.push(`${at}.${key}: unknown field (tenancyCount, selector, template)`);
    }
  }
  const tenancyCount = definition.tenancyCount ?? 0;
  if (typeof tenancyCount !== "number" || !Number.isInteger(tenancyCount) || tenancyCount < 0) {
    problems.push(
      `${at}.tenancyCount: ${JSON.stringify(tenancyCount)} must be an integer >= 0 (0 = unlimited)`,
    );
  }
  problems.push(...selectorProblems(definition.selector, `${at}.selector`));
  const template = isObject(definition.template) ? definition.template : undefined;
  if (!template) {
    problems.push(`${at}.template: required (metadata and spec with profile and tenancy)`);
    return undefined;
  }
  const metadata = isObject(template.metadata) ? template.metadata : {};
  const spec = isObject(template.spec) ? template.spec : {};
  unknownFields(template, TEMPLATE_FIELDS, `${at}.template`, problems);
  unknownFields(metadata, TEMPLATE_METADATA_FIELDS, `${at}.template.metadata`, problems);
  unknownFields(spec, TEMPLATE_SPEC_FIELDS, `${at}.template.spec`, problems);
  for (const field of ["name", "generateName", "namespace"] as const) {
    if (metadata[field] !== undefined && typeof metadata[field] !== "string")
      problems.push(`${at}.template.metadata.${field}: ${JSON.stringify(metadata[field])} must be a string`);
  }
  for (const field of ["labels", "annotations"] as const) {
    const entries = metadata[field];
    if (entries === undefined) continue;
    if (!isObject(entries)) problems.push(`${at}.template.metadata.${field}: must map keys to string values`);
    else
      for (const [key, value] of Object.entries(entries)) {
        if (typeof value !== "string") {
          problems.push(
            `${at}.template.metadata.${field}.${key}: ${JSON.stringify(value)} must be a string (quote it)`,
          );
        }
      }
  }
  if (
    spec.purposes !== undefined &&
    (!Array.isArray(spec.purposes) || spec.purposes.some((p) => typeof p !== "string"))
  ) {
    problems.push(`${at}.template.spec.purposes: must be a list of purposes`);
  }
  if (typeof spec.profile !== "string" || spec.profile === "")
    problems.push(`${at}.template.spec.profile: required`);
  const tenancy = spec.tenancy;
  if (tenancy === undefined)
    problems.push(`${at}.template.spec.tenancy: required (${TENANCIES.join(" or ")})`);
  else if (!(TENANCIES as readonly unknown[]).includes(tenancy)) {
    problems.push(
      `${at}.template.spec.tenancy: ${JSON.stringify(tenancy)} is not one of ${TENANCIES.join(", ")}`,
    );
  } else if (tenancy === "Exclusive" && tenancyCount !== 0) {
    problems.push(`${at}.tenancyCount: must be 0 when the template's tenancy is Exclusive`);
  }
  const labels = (isObject(metadata.labels) ? metadata.labels : {}) as Record<string, string>;
  if (!selectorMatches(global, labels)) {
    problems.push(
      `${at}.template.metadata.labels: do not match the global cluster selector (selectors.clusters)`,
    );
  }
  const local = definition.selector as LabelSelector | undefined;
  if (!selectorMatches(local, labels)) {
    problems.push(`${at}.template.metadata.labels: do not match this purpose's selector`);
  }
  return {
    tenancyCount: typeof tenancyCount === "number" ? tenancyCount : 0,
    ...(local ? { selector: local } : {}),
    // Without metadata the template still has one (openMCP embeds it), so the scheduler can read it.
    template: { ...template, metadata } as unknown as ClusterTemplate,
  };
}

/**
 * Names the mapping would give Clusters that the API server would refuse, or that leave no room for the
 * hash (openMCP fails on those at the first request; here the configuration is refused at once).
 */
function nameProblems(mapping: PurposeMapping, purpose: string, at: string): string[] {
  const { metadata, spec } = mapping.template;
  const problems: string[] = [];
  if (typeof metadata.namespace === "string" && metadata.namespace !== "") {
    const problem = clusterNameProblem(metadata.namespace);
    if (problem) problems.push(`${at}.template.metadata.namespace: ${problem}`);
  }
  if (spec?.tenancy === "Shared" && mapping.tenancyCount === 0) {
    const problem = clusterNameProblem(singletonClusterName(mapping, purpose));
    const field = metadata.name ? "template.metadata.name" : "(the purpose, as the Cluster name)";
    if (problem) problems.push(`${at}.${field}: ${problem}`);
  } else if (spec?.tenancy === "Exclusive" || spec?.tenancy === "Shared") {
    const problem = perRequestPrefixProblem(perRequestPrefix(mapping, purpose));
    const field = metadata.generateName
      ? "template.metadata.generateName"
      : "(the purpose, as the name prefix)";
    if (problem) problems.push(`${at}.${field}: ${problem}`);
  }
  return problems;
}

/** A few words about a configuration, for a log line. */
export function describeConfig(config: SchedulerConfig): Record<string, unknown> {
  return {
    scope: config.scope,
    strategy: config.strategy,
    purposes: Object.entries(config.purposeMappings).map(
      ([purpose, mapping]) =>
        `${purpose}: ${mapping.template.spec.tenancy}${mapping.template.spec.tenancy === "Shared" ? ` (${mapping.tenancyCount || "unlimited"})` : ""} on ${mapping.template.spec.profile}`,
    ),
    ...(config.purposesServedElsewhere ? { servedElsewhere: config.purposesServedElsewhere } : {}),
  };
}
