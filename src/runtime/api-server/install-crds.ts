/**
 * Installs CRDs from a folder with server-side apply and waits until the API server serves them; then the
 * admission policies that come with them (`<folder>/policies`), which guard what a CRD's own validation
 * cannot, e.g. a DELETE.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { reuseConnections } from "./connection-reuse.ts";
import { serverSideApply } from "./server-side-apply.ts";

/** How to install CRDs. */
export interface InstallCrdsProps {
  /** Folder whose `*.yaml` files hold CustomResourceDefinitions (other kinds are an error). */
  readonly directory: string;
  /** Extra labels put on every CRD (e.g. `openmcp.cloud/cluster: platform`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Give up waiting for the CRDs to be served after this long. */
  readonly timeoutMs?: number;
}

/** Reads every CRD document in `directory`, sorted by file name. */
export async function readCrds(directory: string): Promise<V1CustomResourceDefinition[]> {
  // kustomization.yaml lets kustomize users include the folder; it is not a CRD.
  const files = (await readdir(directory))
    .filter((file) => /\.ya?ml$/.test(file) && !/^kustomization\.ya?ml$/.test(file))
    .sort();
  const crds: V1CustomResourceDefinition[] = [];
  for (const file of files) {
    // client-node's loader yields typed models (xKubernetesValidations, …); plain YAML objects would lose
    // every `x-kubernetes-*` key when client-node serializes them as V1CustomResourceDefinition.
    let objects: unknown[];
    try {
      objects = loadAllYaml(await readFile(join(directory, file), "utf8"));
    } catch (error) {
      throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
    }
    for (const object of objects as Array<V1CustomResourceDefinition | null>) {
      if (object === null || object === undefined) continue;
      if (object.kind !== "CustomResourceDefinition") {
        throw new Error(
          `${file}: expected only CustomResourceDefinitions, found kind ${String(object.kind)}`,
        );
      }
      crds.push(object);
    }
  }
  if (crds.length === 0) throw new Error(`no CustomResourceDefinitions found in ${directory}`);
  return crds;
}

/**
 * Applies the CRDs (creating or updating them) and resolves once each is Established and its
 * resource answers a list request, i.e. once clients can use it. Returns the CRD names. Its requests (an apply of
 * each CRD, then polls until each is served) share one TLS connection pool.
 */
export async function installCrds(kubeConfig: KubeConfig, props: InstallCrdsProps): Promise<string[]> {
  reuseConnections(kubeConfig);
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  const crds = await readCrds(props.directory);
  // Server-side apply of each object, with the extra labels.
  const apply = (object: KubernetesObject) =>
    serverSideApply(objects, {
      ...object,
      metadata: { ...object.metadata, labels: { ...object.metadata?.labels, ...props.labels } },
    });
  for (const crd of crds) await apply(crd);
  await waitUntilServed(kubeConfig, crds, props.timeoutMs ?? 60_000);
  for (const policy of await readAdmissionPolicies(props.directory)) await apply(policy);
  return crds.map((crd) => crd.metadata?.name ?? "");
}

/** The folder, beside the CRDs, that holds their admission policies. */
export const POLICIES_FOLDER = "policies";

const POLICY_KINDS = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"];

/** Every policy document of `<crdDirectory>/policies`, sorted by file name; none when the folder is absent. */
export async function readAdmissionPolicies(crdDirectory: string): Promise<KubernetesObject[]> {
  const directory = join(crdDirectory, POLICIES_FOLDER);
  if (!existsSync(directory)) return [];
  const files = (await readdir(directory)).filter((file) => /\.ya?ml$/.test(file)).sort();
  const policies: KubernetesObject[] = [];
  for (const file of files) {
    const objects = loadAllYaml(
      await readFile(join(directory, file), "utf8"),
    ) as Array<KubernetesObject | null>;
    for (const object of objects) {
      if (!object) continue;
      if (!POLICY_KINDS.includes(object.kind ?? ""))
        throw new Error(
          `${POLICIES_FOLDER}/${file}: expected only ${POLICY_KINDS.join(" and ")} objects, found kind ${String(object.kind)}`,
        );
      policies.push(object);
    }
  }
  return policies;
}

async function waitUntilServed(
  kubeConfig: KubeConfig,
  crds: readonly V1CustomResourceDefinition[],
  timeoutMs: number,
): Promise<void> {
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(crds);
  let lastProblem = "";
  while (pending.size > 0) {
    for (const crd of [...pending]) {
      const name = crd.metadata?.name ?? "";
      try {
        const live = await extensions.readCustomResourceDefinition({ name });
        const established = live.status?.conditions?.some(
          (c) => c.type === "Established" && c.status === "True",
        );
        if (!established) {
          lastProblem = `${name} is not Established yet`;
          continue;
        }
        // Discovery (readable by every authenticated client) lists the resource once it is served.
        const version = crd.spec.versions.find((v) => v.served)?.name ?? "";
        const discovered = await custom.getAPIResources({ group: crd.spec.group, version });
        if (!discovered.resources.some((resource) => resource.name === crd.spec.names.plural)) {
          lastProblem = `${name} is not in discovery yet`;
          continue;
        }
        pending.delete(crd);
      } catch (error) {
        lastProblem = `${name}: ${(error as Error).message.split("\n")[0]}`;
      }
    }
    if (pending.size === 0) break;
    if (Date.now() > deadline) {
      throw new Error(`CRDs not served after ${timeoutMs} ms (${lastProblem})`);
    }
    await sleep(100);
  }
}

/**
 * A `prepare` step for a fresh control plane: installs the CRDs of `directory` (relative to the working
 * folder) and waits until they are served, telling `log` what it did.
 */
export function installingCrds(
  directory: string,
  log: (message: string) => void = () => {},
): (kubeConfig: KubeConfig) => Promise<void> {
  return async (kubeConfig) => {
    log(`installing CRDs from ${directory}`);
    const names = await installCrds(kubeConfig, { directory: resolve(directory) });
    log(`CRDs served: ${names.join(", ")}`);
  };
}
