/** Finds a backend by `--backend`: a built-in name, a module path, or a package that exports a factory. */
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  BACKEND_CONTRACT_VERSION,
  type BackendContext,
  type BackendFactory,
  type ClusterBackend,
} from "../api/backend-contract.ts";
import { contractCompatibility } from "../api/contract-version.ts";

/** The built-in backends, loaded on demand. */
const builtIns: Readonly<Record<string, () => Promise<unknown>>> = {
  simulated: () => import("./simulated.ts"),
  local: () => import("./local.ts"),
  kind: () => import("./kind/index.ts"),
  existing: () => import("./existing.ts"),
  gardener: () => import("./gardener.ts"),
  capi: () => import("./capi.ts"),
};

/** Names of the built-in backends. */
export const BUILT_IN_BACKENDS: readonly string[] = Object.keys(builtIns);

/** A backend could not be loaded or made; the message says what to fix. */
export class BackendLoadError extends Error {
  override readonly name = "BackendLoadError";
}

const looksLikePath = (spec: string) =>
  spec.startsWith("./") || spec.startsWith("../") || isAbsolute(spec) || /\.(m?js|ts|mts)$/.test(spec);

/** Imports the module `spec` names (relative paths and packages are resolved from `cwd`). */
async function importBackendModule(spec: string, cwd: string): Promise<unknown> {
  const builtIn = builtIns[spec];
  if (builtIn) return builtIn();
  try {
    if (looksLikePath(spec)) return await import(pathToFileURL(resolve(cwd, spec)).href);
    try {
      return await import(createRequire(join(cwd, "package.json")).resolve(spec));
    } catch {
      return await import(spec); // e.g. a package installed next to the engine itself
    }
  } catch (error) {
    const known = BUILT_IN_BACKENDS.join(", ");
    throw new BackendLoadError(
      `cannot load backend "${spec}": ${(error as Error).message.split("\n")[0]} (built-in backends: ${known}; or give a module path or package name)`,
      { cause: error },
    );
  }
}

/**
 * The factory a backend module exports as `createBackend` or as its default export, once the module's
 * `contractVersion` says it was built for a backend contract this engine implements.
 */
export async function loadBackendFactory(spec: string, cwd = process.cwd()): Promise<BackendFactory> {
  const module = (await importBackendModule(spec, cwd)) as Record<string, unknown>;
  const factory = module.createBackend ?? module.default;
  if (typeof factory !== "function") {
    const exports = Object.keys(module).join(", ") || "nothing";
    throw new BackendLoadError(
      `backend module "${spec}" exports no createBackend function (it exports: ${exports}); export a BackendFactory as createBackend or as default`,
    );
  }
  const verdict = contractCompatibility(BACKEND_CONTRACT_VERSION, module.contractVersion);
  if (!verdict.compatible) throw new BackendLoadError(`backend "${spec}" cannot be loaded: ${verdict.why}`);
  return factory as BackendFactory;
}

const requiredMethods = [
  "supportedVersions",
  "traits",
  "observe",
  "create",
  "update",
  "delete",
  "adminAccess",
] as const;

/** Loads and makes the backend `spec` names, and checks that it has the shape of a {@link ClusterBackend}. */
export async function createBackend(
  spec: string,
  context: BackendContext,
  cwd = process.cwd(),
): Promise<ClusterBackend> {
  const factory = await loadBackendFactory(spec, cwd);
  let backend: ClusterBackend;
  try {
    backend = await factory(context);
  } catch (error) {
    throw new BackendLoadError(`backend "${spec}" could not start: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const candidate = backend as unknown as Record<string, unknown> | undefined;
  const missing = requiredMethods.filter((method) => typeof candidate?.[method] !== "function");
  if (typeof candidate?.name !== "string") missing.unshift("name" as never);
  if (typeof candidate?.capabilities !== "object") missing.push("capabilities" as never);
  if (missing.length > 0) {
    throw new BackendLoadError(
      `backend "${spec}" lacks ${missing.join(", ")}; see ClusterBackend in openmcp-engine/backend`,
    );
  }
  return backend;
}
