/**
 * What the CLI needs of the repository beyond the package: development modules (`src/dev`: stand-ins for
 * Gardener, Cluster API and an identity provider) and files (`deploy/`, `hack/`). The package leaves them out,
 * so a command that needs one, run from the installed package, says so instead of failing on a missing path.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { findKubeAssets, type KubeAssets } from "../controlplane/kube-assets.ts";

/** The checkout's root, or the installed package's: `dist/cli` stands where `src/cli` does. */
const ROOT = join(import.meta.dirname, "..", "..");

/** A command needs something of the repository that the installed package does not have. */
export class CheckoutNeededError extends Error {
  /** `what`: the command or step; `why`: what of the checkout it uses. */
  constructor(what: string, why: string, options?: ErrorOptions) {
    super(`${what} needs a checkout of the openmcp-engine repository: ${why}`, options);
    this.name = "CheckoutNeededError";
  }
}

/** The path of `relative` (e.g. `crds`, `examples/demo-local`), one of the files the package ships. */
export function packageFile(relative: string): string {
  return join(ROOT, relative);
}

/**
 * The path of `relative` (e.g. `deploy/base`, `hack/containers/ensure.sh`) in the checkout; a
 * {@link CheckoutNeededError} naming `purpose` and the file when it is absent, as in the installed package.
 */
export function checkoutFile(relative: string, purpose: string): string {
  const path = join(ROOT, relative);
  if (!existsSync(path))
    throw new CheckoutNeededError(
      purpose,
      `it uses ${relative}, which the installed package does not ship (${path} is missing)`,
    );
  return path;
}

/** Runs `load` (a dynamic import of a `src/dev` module); when that module is absent, a {@link CheckoutNeededError} naming `what`. */
export async function loadFromCheckout<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND")
      throw new CheckoutNeededError(
        what,
        "it runs development stand-ins (src/dev) that the package does not ship",
        { cause: error },
      );
    throw error;
  }
}

/** kube-apiserver and etcd from `directory`, else built by the checkout's hack/kube/build.sh. */
export function kubeAssets(directory: string | undefined): KubeAssets {
  if (directory === undefined)
    checkoutFile("hack/kube/build.sh", "building kube-apiserver and etcd (no --assets)");
  return findKubeAssets(directory);
}
