/**
 * Renders a kustomization with kustomize itself (hack/kustomize/build.sh finds or builds it), so tests check
 * the objects `kubectl apply -k` would apply, overlays and patches included, not the files they start from.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";

/** The repository's script; it honours OPENMCP_KUSTOMIZE and the per-machine cache. */
const KUSTOMIZE_BUILD_SCRIPT = join(import.meta.dirname, "..", "..", "hack", "kustomize", "build.sh");

/** The kustomize binary, built the first time on a machine (about a minute; progress on stderr). */
export function findKustomize(): string {
  const output = execFileSync(KUSTOMIZE_BUILD_SCRIPT, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return output.trim().split("\n").at(-1) ?? "";
}

/** Every object `kustomize build <directory>` renders, in its order; a broken kustomization throws its message. */
export function renderKustomization(directory: string): KubernetesObject[] {
  const rendered = execFileSync(findKustomize(), ["build", directory], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return loadAllYaml(rendered) as KubernetesObject[];
}
