/**
 * `openmcp-engine/testing`: a throwaway real Kubernetes API server (etcd + kube-apiserver, and
 * kube-controller-manager where the binaries have it) for a backend's own tests — the same binaries and start
 * the engine's tests and `openmcp-engine up` use. For backends that keep their clusters in a Kubernetes API
 * (namespaces on a host, custom resources) and for the conformance kit's proof that admin access works.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { type ControlPlane, startControlPlane } from "./controlplane/control-plane.ts";
import { findKubeAssets, KUBE_BUILD_SCRIPT } from "./controlplane/kube-assets.ts";

/** Options of {@link startTestApiServer}; every field is optional. */
export interface TestApiServerOptions {
  /**
   * A folder holding `kube-apiserver` and `etcd` (and optionally `kube-controller-manager`). Default:
   * `$KUBEBUILDER_ASSETS` (the envtest convention: `setup-envtest use -p path` prints such a folder), else in a
   * checkout of the engine its build script's folder, else the newest complete folder of the engine's per-machine
   * cache (`~/.cache/openmcp-engine/kube/<version>`, or `$OPENMCP_KUBE_CACHE`).
   */
  readonly assetsDirectory?: string;
  /** How long the start may take (default 90 s). */
  readonly startTimeoutMs?: number;
  /** Extra kube-apiserver flags, `--name=value`, appended last so they win. */
  readonly extraApiServerArgs?: readonly string[];
  /** Progress messages (default: none). */
  readonly log?: (message: string) => void;
}

/**
 * A running API server; {@link TestApiServer.stop} it when done (it also stops when the process ends). Its
 * `server`, `kubeconfigPath`, `kubeConfig` and `stop` are those of the control plane it runs.
 */
export interface TestApiServer
  extends Pick<ControlPlane, "server" | "kubeconfigPath" | "kubeConfig" | "stop"> {
  /** An admin kubeconfig (`system:masters`), as YAML text: what a backend option or a Secret would carry. */
  readonly kubeconfig: string;
  /** Whether kube-controller-manager runs too (namespaces then finish deleting, aggregated roles such as `admin` fill). */
  readonly controllers: boolean;
}

/**
 * Starts a fresh API server on free loopback ports with its own certificates and data, and resolves once it is
 * healthy. Nothing is shared with any other server; when this process ends in any way (even SIGKILL) the processes
 * are stopped and the folder removed. Takes a few seconds.
 *
 * @example
 * const api = await startTestApiServer();
 * try {
 *   await checkBackendConformance(backendModule, { context: { options: { kubeconfig: api.kubeconfigPath } } });
 * } finally {
 *   await api.stop();
 * }
 */
export async function startTestApiServer(options: TestApiServerOptions = {}): Promise<TestApiServer> {
  const assets = findKubeAssets(options.assetsDirectory ?? defaultAssetsDirectory());
  const controlPlane = await startControlPlane({
    assetsDirectory: assets.directory,
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
    ...(options.extraApiServerArgs ? { extraApiServerArgs: options.extraApiServerArgs } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    server: controlPlane.server,
    kubeconfig: readFileSync(controlPlane.kubeconfigPath, "utf8"),
    kubeconfigPath: controlPlane.kubeconfigPath,
    kubeConfig: controlPlane.kubeConfig,
    controllers: assets.kubeControllerManager !== undefined,
    stop: () => controlPlane.stop(),
  };
}

const usable = (folder: string) =>
  existsSync(join(folder, "kube-apiserver")) && existsSync(join(folder, "etcd"));

/** Where the binaries are when the caller names no folder; throws saying how to provide them when nowhere. */
export function defaultAssetsDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.KUBEBUILDER_ASSETS) return env.KUBEBUILDER_ASSETS;
  if (existsSync(KUBE_BUILD_SCRIPT)) return undefined; // a checkout: the build script finds or builds them
  const cache =
    env.OPENMCP_KUBE_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "openmcp-engine", "kube");
  const cached = existsSync(cache)
    ? readdirSync(cache)
        .filter((name) => /^v\d+\.\d+\.\d+$/.test(name) && usable(join(cache, name)))
        .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    : [];
  const newest = cached.at(-1);
  if (newest) return join(cache, newest);
  throw new Error(
    "openmcp-engine/testing: no kube-apiserver and etcd found. Set KUBEBUILDER_ASSETS to a folder holding them " +
      "(e.g. `go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest use -p path`), or pass assetsDirectory.",
  );
}
