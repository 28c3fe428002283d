/** Kubernetes label selectors (metav1.LabelSelector): matching, checking and ANDing them. Pure. */
import type { LabelSelector, LabelSelectorRequirement } from "../../api/scheduler-config.ts";

/** Whether `labels` satisfy the selector (matchLabels AND every expression); an absent or empty selector selects everything. */
export function selectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!selector) return true;
  const own = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (own[key] !== value) return false;
  return (selector.matchExpressions ?? []).every((requirement) => requirementMatches(requirement, own));
}

function requirementMatches(
  requirement: LabelSelectorRequirement,
  labels: Readonly<Record<string, string>>,
): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  switch (requirement.operator) {
    case "In":
      return has && (requirement.values ?? []).includes(value ?? "");
    case "NotIn":
      return !has || !(requirement.values ?? []).includes(value ?? "");
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    default:
      return false;
  }
}

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whether `key` is a valid label key (`[prefix/]name`). */
export function validLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !LABEL_PREFIX.test(prefix)))
    return false;
  return name.length > 0 && name.length <= 63 && LABEL_NAME.test(name);
}

/** Whether `value` is a valid label value (empty allowed). */
export function validLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && LABEL_NAME.test(value));
}

/** Everything wrong with a selector, each naming its field under `path`. */
export function selectorProblems(selector: unknown, path: string): string[] {
  if (selector === undefined || selector === null) return [];
  if (typeof selector !== "object" || Array.isArray(selector))
    return [`${path}: must be a label selector object`];
  const problems: string[] = [];
  const { matchLabels, matchExpressions, ...rest } = selector as Record<string, unknown>;
  for (const key of Object.keys(rest))
    problems.push(`${path}.${key}: unknown field (matchLabels, matchExpressions)`);
  if (matchLabels !== undefined) {
    if (typeof matchLabels !== "object" || matchLabels === null || Array.isArray(matchLabels)) {
      problems.push(`${path}.matchLabels: must map label keys to values`);
    } else {
      for (const [key, value] of Object.entries(matchLabels)) {
        if (!validLabelKey(key)) problems.push(`${path}.matchLabels: "${key}" is not a valid label key`);
        if (typeof value !== "string" || !validLabelValue(value)) {
          problems.push(`${path}.matchLabels.${key}: ${JSON.stringify(value)} is not a valid label value`);
        }
      }
    }
  }
  if (matchExpressions !== undefined) {
    if (!Array.isArray(matchExpressions)) problems.push(`${path}.matchExpressions: must be a list`);
    else
      for (const [index, requirement] of matchExpressions.entries()) {
        problems.push(...requirementProblems(requirement, `${path}.matchExpressions[${index}]`));
      }
  }
  return problems;
}

function requirementProblems(requirement: unknown, path: string): string[] {
  if (typeof requirement !== "object" || requirement === null)
    return [`${path}: must be {key, operator, values}`];
  const { key, operator, values } = requirement as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof key !== "string" || !validLabelKey(key))
    problems.push(`${path}.key: ${JSON.stringify(key)} is not a valid label key`);
  if (operator === "In" || operator === "NotIn") {
    if (!Array.isArray(values) || values.length === 0)
      problems.push(`${path}.values: ${operator} needs at least one value`);
    else if (values.some((value) => typeof value !== "string" || !validLabelValue(value))) {
      problems.push(`${path}.values: every value must be a valid label value`);
    }
  } else if (operator === "Exists" || operator === "DoesNotExist") {
    if (Array.isArray(values) && values.length > 0)
      problems.push(`${path}.values: ${operator} takes no values`);
  } else {
    problems.push(
      `${path}.operator: ${JSON.stringify(operator)} is not one of In, NotIn, Exists, DoesNotExist`,
    );
  }
  return problems;
}

/** The AND of two selectors (undefined when both select everything). */
export function bothSelectors(
  a: LabelSelector | undefined,
  b: LabelSelector | undefined,
): LabelSelector | undefined {
  if (!a) return b;
  if (!b) return a;
  const matchLabels = { ...a.matchLabels };
  const matchExpressions = [...(a.matchExpressions ?? []), ...(b.matchExpressions ?? [])];
  for (const [key, value] of Object.entries(b.matchLabels ?? {})) {
    // Two different values for one key can never both hold: keep both as expressions so nothing matches.
    if (key in matchLabels && matchLabels[key] !== value)
      matchExpressions.push({ key, operator: "In", values: [value] });
    else matchLabels[key] = value;
  }
  return { matchLabels, matchExpressions };
}
