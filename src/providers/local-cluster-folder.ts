/**
 * A `local` cluster's folder: the marker files that say what it is doing (asleep, waking, being restored), the
 * settings it starts with, and how its processes are launched from what the folder records.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { errorMessage } from "../api/error-message.ts";
import type { Logger } from "../api/logger.ts";
import type { KubeAssets } from "../controlplane/kube-assets.ts";
import {
  inspectPersistentControlPlane,
  type PersistentControlPlaneStatus,
  startPersistentControlPlane,
} from "../controlplane/persistent-control-plane.ts";
import { acceptedIssuers } from "./local-snapshots.ts";
import { authenticationConfigPath, ensureAuthenticationConfig } from "./shared/authentication-config.ts";

/** In a cluster's folder while it is asked to sleep (contract 1.6): neither the supervisor nor `create` starts it. */
export const HIBERNATED_FILE = "hibernated";
/** In a cluster's folder from a wake until its processes are healthy again. */
export const WAKING_FILE = "waking";
/** In a cluster's folder: the `--runtime-config` its kube-apiserver starts with (its settings when made or last updated). */
export const RUNTIME_CONFIG_FILE = "runtime-config";
/** In a cluster's folder while a restore replaces its etcd data (contract 1.7); holds the snapshot's name. */
export const RESTORING_FILE = "restoring";

/**
 * Fails unless the API server port the cluster's record names is free: a woken cluster keeps its endpoint (its
 * kubeconfigs and tokens name it), so it waits, failing with backoff, rather than start on another port.
 */
async function requireRecordedPort(directory: string): Promise<void> {
  const port = (await inspectPersistentControlPlane(directory)).record?.ports.apiServer;
  if (port === undefined) return;
  await new Promise<void>((done, failed) => {
    const server = createServer();
    server.once("error", () =>
      failed(
        new Error(
          `port ${port} of its API server is taken by another process; the cluster keeps its endpoint, so it starts once the port is free`,
        ),
      ),
    );
    server.listen(port, "127.0.0.1", () => server.close(() => done()));
  });
}

/** Why `value` is not kube-apiserver's `--runtime-config` (undefined: it is; "" is none). */
export function runtimeConfigProblem(value: string): string | undefined {
  if (value === "" || /^[\w.-]+(\/[\w.-]+)?=(true|false)(,[\w.-]+(\/[\w.-]+)?=(true|false))*$/.test(value))
    return undefined;
  return `runtimeConfig "${value}" must be kube-apiserver's --runtime-config, like networking.k8s.io/v1beta1=true,api/beta=true`;
}

/** The `--runtime-config` the cluster in `directory` was last started with; `fallback` for a cluster made before it was recorded. */
export async function recordedRuntimeConfig(directory: string, fallback: string): Promise<string> {
  const recorded = await readFile(join(directory, RUNTIME_CONFIG_FILE), "utf8").catch(() => undefined);
  return recorded ?? fallback;
}

/**
 * Starts (or adopts) the processes of the cluster in `directory` as its folder records them: its authentication
 * configuration, the issuers it accepts besides its own (the original's, for a clone) and its `--runtime-config`; a
 * waking cluster only on its recorded API server port (its kubeconfigs and tokens name it).
 */
export async function launchLocalCluster(
  directory: string,
  props: {
    readonly assets: KubeAssets;
    /** The `--runtime-config` of a cluster that recorded none. */
    readonly runtimeConfig: string;
    readonly startTimeoutMs: number;
    readonly signal: AbortSignal;
    readonly log: Logger;
  },
) {
  const waking = existsSync(join(directory, WAKING_FILE));
  await ensureAuthenticationConfig(directory);
  if (waking) await requireRecordedPort(directory);
  const issuers = await acceptedIssuers(directory);
  const runtimeConfig = await recordedRuntimeConfig(directory, props.runtimeConfig);
  return startPersistentControlPlane({
    directory,
    assets: props.assets,
    extraApiServerArgs: [
      `--authentication-config=${authenticationConfigPath(directory)}`,
      // After the launch's own issuer (its URL, which signs new tokens): the original's, for a clone.
      ...issuers.map((issuer) => `--service-account-issuer=${issuer}`),
      ...(runtimeConfig ? [`--runtime-config=${runtimeConfig}`] : []),
    ],
    startTimeoutMs: props.startTimeoutMs,
    signal: props.signal,
    log: (message) => props.log.debug(message),
  });
}

/** The processes of a running cluster, as its observation names them. */
export function describeProcesses(status: PersistentControlPlaneStatus): string {
  const pids = status.record?.pids;
  return `local etcd + kube-apiserver at ${status.server} (pids ${pids?.etcd}, ${pids?.apiServer})`;
}

/** One line a person can act on: what failed (no log text, which could carry anything) and where the logs are. */
export function failureMessage(error: unknown, directory: string, retryInMs: number): string {
  const reason = errorMessage(error).split("\n")[0] ?? "unknown error";
  return `${reason}; see the last lines of ${join(directory, "kube-apiserver.log")} and ${join(directory, "etcd.log")}; retrying in ${Math.round(retryInMs / 1_000)} s`;
}
