/**
 * `openmcp-engine capi-components`: prints the engine as clusterctl installs an infrastructure provider —
 * one YAML stream of the CRDs (the infrastructure kinds and the control-plane kinds alike: one controller
 * serves both) with their admission policies, deploy/base and the aggregated ClusterRole of deploy/capi, every object labelled
 * `cluster.x-k8s.io/provider: infrastructure-<name>` and the controller started with `--capi`.
 * Save it as infrastructure-components.yaml next to deploy/capi/metadata.yaml in a release.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { parseAllDocuments, stringify } from "yaml";
import { CAPI_LABELS } from "../api/cluster-api.ts";
import { POLICIES_FOLDER } from "../runtime/api-server/install-crds.ts";
import { checkoutFile, packageFile } from "./from-checkout.ts";

/** The provider's name in clusterctl (`clusterctl init --infrastructure openmcp-engine`). */
export const CAPI_PROVIDER_NAME = "openmcp-engine";

export const capiComponentsUsage = `Usage: openmcp-engine capi-components > infrastructure-components.yaml

Prints the engine as a Cluster API infrastructure provider ("${CAPI_PROVIDER_NAME}") for clusterctl: CRDs (EngineCluster,
and the managed control plane EngineControlPlane with its EngineControlPlaneInfrastructure), RBAC (with the
ClusterRole Cluster API's manager aggregates), the Deployment running 'run --capi'. Every object is labelled
${CAPI_LABELS.provider}: infrastructure-${CAPI_PROVIDER_NAME}.`;

function objectsOf(directory: string): KubernetesObject[] {
  return (
    readdirSync(directory)
      .filter((file) => /\.ya?ml$/.test(file) && file !== "kustomization.yaml" && file !== "metadata.yaml")
      .sort()
      // Plain YAML, not client-node's loadAllYaml: that one turns objects into its typed models, whose field names
      // (x_kubernetes_validations) are not the API's (x-kubernetes-validations), and would print those.
      .flatMap((file) =>
        parseAllDocuments(readFileSync(join(directory, file), "utf8")).map(
          (document) => document.toJS() as KubernetesObject,
        ),
      )
      .filter((object) => object !== null && object !== undefined)
  );
}

/**
 * `--scheduler-config-map=<namespace>/<name>` naming the Deployment's own namespace names it as `$(POD_NAMESPACE)`
 * (kubelet expands it from the container's environment): `clusterctl init --target-namespace` moves every object
 * of the components, the ConfigMap too, but cannot rewrite a flag. clusterctl's substitution leaves `$(` alone.
 */
function inOwnNamespace(arg: string, namespace: string | undefined): string {
  const flag = "--scheduler-config-map=";
  return namespace && arg.startsWith(`${flag}${namespace}/`)
    ? `${flag}$(POD_NAMESPACE)/${arg.slice(flag.length + namespace.length + 1)}`
    : arg;
}

/** The objects of the components manifest, in apply order (CRDs and Namespace first). */
export function capiComponents(): KubernetesObject[] {
  const objects = [
    ...objectsOf(packageFile("crds")),
    ...objectsOf(packageFile(`crds/${POLICIES_FOLDER}`)),
    ...objectsOf(checkoutFile("deploy/base", "capi-components")),
    ...objectsOf(checkoutFile("deploy/capi", "capi-components")),
  ];
  const first = (object: KubernetesObject) =>
    object.kind === "CustomResourceDefinition" || object.kind === "Namespace" ? 0 : 1;
  return objects
    .sort((a, b) => first(a) - first(b))
    .map((object) => {
      const labelled = {
        ...object,
        metadata: {
          ...object.metadata,
          labels: {
            ...object.metadata?.labels,
            [CAPI_LABELS.provider]: `infrastructure-${CAPI_PROVIDER_NAME}`,
          },
        },
      } as KubernetesObject & {
        spec?: {
          template?: { spec?: { containers?: Array<{ args?: string[]; env?: Array<{ name: string }> }> } };
        };
      };
      if (labelled.kind === "Deployment") {
        for (const container of labelled.spec?.template?.spec?.containers ?? []) {
          if (!container.args?.includes("--capi")) container.args = [...(container.args ?? []), "--capi"];
          if (container.env?.some((variable) => variable.name === "POD_NAMESPACE"))
            container.args = container.args.map((arg) => inOwnNamespace(arg, object.metadata?.namespace));
        }
      }
      return labelled;
    });
}

/** Prints the manifest. */
export function printCapiComponents(args: readonly string[]): void {
  if (args.includes("-h") || args.includes("--help")) {
    console.log(capiComponentsUsage);
    return;
  }
  process.stdout.write(
    capiComponents()
      .map((object) => stringify(object))
      .join("---\n"),
  );
}
