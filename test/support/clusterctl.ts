/**
 * What `clusterctl init` does to a provider's components YAML before it creates the objects
 * (cmd/clusterctl/client/repository/components.go `NewComponents`), for tests that install providers the
 * clusterctl way where clusterctl itself cannot run (no registry, no GitHub): variable substitution, the target
 * namespace, the common labels, and the apply order.
 */
import type { KubernetesObject } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";

/** How clusterctl is told to install one provider. */
export interface ClusterctlInstall {
  /** The provider's manifest label: `cluster-api` for the core provider, `infrastructure-<name>` for another. */
  readonly manifestLabel: string;
  /** Values of the clusterctl variables (its config file or the environment). */
  readonly variables?: Readonly<Record<string, string>>;
  /** `--target-namespace`; default: the components' own Namespace. */
  readonly targetNamespace?: string;
}

/** A variable the components use, with its default (`${NAME:=default}`) if it has one. */
export interface ClusterctlVariable {
  readonly name: string;
  readonly default?: string;
}

// drone/envsubst's forms clusterctl's SimpleProcessor accepts: ${NAME} and ${NAME<op>default}, op one of := = :- -.
const VARIABLE = /\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:(:?[=-])([^}]*))?\}/g;
// `$$` is drone/envsubst's escape for `$`; a `$` before anything but `{` or `$` (e.g. kubelet's `$(VAR)`) is text.
const ESCAPED_OR_VARIABLE = new RegExp(`\\$\\$|${VARIABLE.source}`, "g");

/** The variables `text` uses, each once (`clusterctl generate provider --describe` lists the same). */
export function clusterctlVariables(text: string): ClusterctlVariable[] {
  const found = new Map<string, ClusterctlVariable>();
  for (const [match, name = "", op, fallback] of text.matchAll(ESCAPED_OR_VARIABLE)) {
    if (match === "$$") continue;
    if (!found.has(name)) found.set(name, op === undefined ? { name } : { name, default: fallback ?? "" });
  }
  return [...found.values()];
}

/**
 * Substitutes every variable as clusterctl does: a value set wins (for `:=`/`:-` only when not empty), else the
 * default; a variable with neither is refused, all of them named at once, as clusterctl refuses them.
 */
export function substituteClusterctlVariables(
  text: string,
  values: Readonly<Record<string, string>> = {},
): string {
  const missing = clusterctlVariables(text)
    .filter((variable) => values[variable.name] === undefined && !variable.default)
    .map((variable) => variable.name)
    .sort();
  if (missing.length > 0)
    throw new Error(
      `value for variables [${missing.join(", ")}] is not set. Please set the value using os environment variables or the clusterctl config file`,
    );
  return text.replace(
    ESCAPED_OR_VARIABLE,
    (match, name: string, op: string | undefined, fallback: string | undefined) => {
      if (match === "$$") return "$";
      const value = values[name];
      if (op === undefined) return value ?? "";
      const unset = op.startsWith(":") ? value === undefined || value === "" : value === undefined;
      return unset ? (fallback ?? "") : (value ?? "");
    },
  );
}

/** Kinds clusterctl treats as cluster-scoped (cmd/clusterctl/internal/util/objs.go); every other kind is namespaced. */
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "Node",
  "PersistentVolume",
  "PodSecurityPolicy",
  "CertificateSigningRequest",
  "ClusterRoleBinding",
  "ClusterRole",
  "VolumeAttachment",
  "StorageClass",
  "CSIDriver",
  "CSINode",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "CustomResourceDefinition",
  "PriorityClass",
  "RuntimeClass",
]);

type Loose = KubernetesObject & Record<string, unknown>;
type ServiceRef = { service?: { namespace?: string } };

/** Points every namespaced reference clusterctl rewrites at the target namespace (components.go `fixTargetNamespace`). */
function intoNamespace(object: Loose, target: string): Loose {
  const original = object.metadata?.namespace;
  const metadata = { ...object.metadata };
  if (object.kind === "Namespace") metadata.name = target;
  if (!CLUSTER_SCOPED.has(object.kind ?? "")) metadata.namespace = target;
  const annotations = metadata.annotations;
  const injectFrom = annotations?.["cert-manager.io/inject-ca-from"];
  if (annotations && injectFrom !== undefined) {
    const [, certificate] = injectFrom.split("/");
    if (certificate === undefined)
      throw new Error(`${object.kind} ${metadata.name}: bad cert-manager.io/inject-ca-from`);
    metadata.annotations = { ...annotations, "cert-manager.io/inject-ca-from": `${target}/${certificate}` };
  }
  const moved = structuredClone({ ...object, metadata }) as Loose;
  const subjects = (moved as { subjects?: Array<{ namespace?: string }> }).subjects;
  if (object.kind === "ClusterRoleBinding" || object.kind === "RoleBinding")
    for (const subject of subjects ?? []) if (subject.namespace) subject.namespace = target;
  const webhooks = (moved as { webhooks?: Array<{ clientConfig?: ServiceRef }> }).webhooks;
  if (object.kind === "MutatingWebhookConfiguration" || object.kind === "ValidatingWebhookConfiguration")
    for (const webhook of webhooks ?? [])
      if (webhook.clientConfig?.service) webhook.clientConfig.service.namespace = target;
  const conversion = (moved as { spec?: { conversion?: { webhook?: { clientConfig?: ServiceRef } } } }).spec
    ?.conversion?.webhook?.clientConfig?.service;
  if (object.kind === "CustomResourceDefinition" && conversion) conversion.namespace = target;
  const dnsNames = (moved as { spec?: { dnsNames?: string[] } }).spec?.dnsNames;
  if (object.kind === "Certificate" && dnsNames && original)
    (moved as { spec: { dnsNames: string[] } }).spec.dnsNames = dnsNames.map((name) =>
      name.replace(`.${original}.`, `.${target}.`),
    );
  return moved;
}

/**
 * The objects `clusterctl init` creates from a provider's components YAML, in its order (Namespaces, then
 * cert-manager's objects, then the rest as written).
 */
export function clusterctlComponents(componentsYaml: string, install: ClusterctlInstall): KubernetesObject[] {
  // Plain YAML (client-node's loadAllYaml would turn CRDs into its typed models, renaming x-kubernetes-* fields).
  const objects = parseAllDocuments(substituteClusterctlVariables(componentsYaml, install.variables))
    .map((document) => document.toJS() as Loose)
    .filter((object) => object !== null && object !== undefined);
  const namespaces = objects.filter((object) => object.kind === "Namespace");
  if (namespaces.length > 1)
    throw new Error(
      "Invalid manifest. There should be no more than one resource with Kind Namespace in the provider components yaml",
    );
  const target = install.targetNamespace ?? namespaces[0]?.metadata?.name;
  if (!target) throw new Error("target namespace can't be defaulted. Please specify a target namespace");
  const all: Loose[] =
    namespaces.length === 0
      ? [...objects, { apiVersion: "v1", kind: "Namespace", metadata: { name: target } }]
      : objects;
  const rank = (object: Loose) =>
    object.kind === "Namespace" ? 0 : (object.apiVersion ?? "").startsWith("cert-manager.io/") ? 1 : 2;
  return all
    .map((object) => intoNamespace(object, target))
    .map((object) => ({
      ...object,
      metadata: {
        ...object.metadata,
        labels: {
          ...object.metadata?.labels,
          "clusterctl.cluster.x-k8s.io": "",
          "cluster.x-k8s.io/provider": install.manifestLabel,
        },
      },
    }))
    .sort((a, b) => rank(a) - rank(b));
}
