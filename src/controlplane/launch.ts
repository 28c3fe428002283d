/**
 * Starts the processes of a control plane in a prepared folder (etcd, kube-apiserver, then
 * kube-controller-manager where the assets have it) and waits until each is healthy.
 */
import { writeFile } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type ManagedProcess, startManagedProcess } from "../util/managed-process.ts";
import type { ControlPlaneCertificates } from "./certificates.ts";
import { adminKubeConfig, certificatePaths, kubeconfigYaml } from "./control-plane-files.ts";
import type { KubeAssets } from "./kube-assets.ts";

/** The loopback ports of one control plane. */
export interface ControlPlanePorts {
  readonly etcd: number;
  readonly etcdPeer: number;
  readonly apiServer: number;
  /** kube-controller-manager's health port; absent where no controller-manager runs (or in old records). */
  readonly controllerManager?: number;
}

/** Thrown when the control plane does not come up; the message carries the processes' last log lines. */
export class ControlPlaneStartError extends Error {
  override readonly name = "ControlPlaneStartError";
}

/** What {@link launchControlPlane} starts, and where. */
export interface LaunchProps {
  readonly assets: KubeAssets;
  /** Folder holding the certificates (see `control-plane-files.ts`); etcd data and logs go there too. */
  readonly directory: string;
  readonly ports: ControlPlanePorts;
  readonly certificates: ControlPlaneCertificates;
  /** How long to wait for each process to become healthy. */
  readonly timeoutMs: number;
  /** Whether etcd syncs its writes to disk (data that must survive a machine crash) or not (throwaway data, faster). */
  readonly durable: boolean;
  /** Extra kube-apiserver flags, `--name=value`, appended last so they win. */
  readonly extraApiServerArgs?: readonly string[];
  /** Called right after each process is spawned with all spawned so far, to guard or record them. */
  readonly onSpawn?: (started: readonly ManagedProcess[]) => void | Promise<void>;
  /** Gives up (stopping what started) when aborted. */
  readonly signal?: AbortSignal;
  readonly log?: (message: string) => void;
}

/** The healthy processes of a control plane. */
export interface LaunchedControlPlane {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  readonly etcd: ManagedProcess;
  readonly apiServer: ManagedProcess;
  /** Present when the assets hold kube-controller-manager and a port was given for it. */
  readonly controllerManager?: ManagedProcess;
}

/**
 * Starts etcd, waits for `/health`, starts kube-apiserver on it, waits for `/readyz` (asked with the admin
 * client certificate), then kube-controller-manager (when the assets have it and `ports` names its
 * health port) and waits for its `/healthz`.
 *
 * Guarantees: on failure every process started is stopped (the folder stays: it is the caller's) and the
 * error is a {@link ControlPlaneStartError} with the last lines of each process's log.
 */
export async function launchControlPlane(props: LaunchProps): Promise<LaunchedControlPlane> {
  const log = props.log ?? (() => {});
  const { ports, directory } = props;
  const path = (name: string) => join(directory, name);
  const files = certificatePaths(directory);
  const server = `https://127.0.0.1:${ports.apiServer}`;
  const started: ManagedProcess[] = [];
  const controllerManagerBinary =
    ports.controllerManager === undefined ? undefined : props.assets.kubeControllerManager;
  const spawn = async (process: ManagedProcess) => {
    started.push(process);
    await props.onSpawn?.([...started]);
    return process;
  };
  try {
    props.signal?.throwIfAborted();
    log(`starting etcd on 127.0.0.1:${ports.etcd}`);
    const etcd = await spawn(
      startManagedProcess({
        name: "etcd",
        command: props.assets.etcd,
        args: [
          `--data-dir=${path("etcd")}`,
          `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
          `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
          `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-cluster=default=http://127.0.0.1:${ports.etcdPeer}`,
          // Throwaway data: durability is not worth the disk latency.
          ...(props.durable ? [] : ["--unsafe-no-fsync"]),
          "--log-level=warn",
        ],
        logPath: path("etcd.log"),
      }),
    );
    await waitUntilHealthy(etcd, props, () => httpHealth(`http://127.0.0.1:${ports.etcd}/health`));

    log(`starting kube-apiserver on ${server}`);
    const apiServer = await spawn(
      startManagedProcess({
        name: "kube-apiserver",
        command: props.assets.kubeApiserver,
        args: [
          "--advertise-address=127.0.0.1",
          "--bind-address=127.0.0.1",
          `--secure-port=${ports.apiServer}`,
          `--cert-dir=${path("certs")}`,
          `--tls-cert-file=${files.servingCert}`,
          `--tls-private-key-file=${files.servingKey}`,
          `--client-ca-file=${files.caCert}`,
          `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
          "--service-cluster-ip-range=10.0.0.0/24",
          `--service-account-issuer=${server}`,
          `--service-account-key-file=${files.serviceAccountPublicKey}`,
          `--service-account-signing-key-file=${files.serviceAccountKey}`,
          "--authorization-mode=RBAC",
          "--allow-privileged=true",
          // Without a controller-manager nothing creates the `default` ServiceAccount pods would need.
          ...(controllerManagerBinary ? [] : ["--disable-admission-plugins=ServiceAccount"]),
          // Endpoints may not point at loopback; nothing needs the in-cluster `kubernetes` Service here.
          "--endpoint-reconciler-type=none",
          "--profiling=false",
          ...(props.extraApiServerArgs ?? []),
        ],
        logPath: path("kube-apiserver.log"),
      }),
    );
    await waitUntilHealthy(apiServer, props, () => apiServerReady(server, props.certificates), [etcd]);

    const controllerManager = await launchControllerManager(props, server, spawn, [etcd, apiServer]);
    return { server, etcd, apiServer, ...(controllerManager ? { controllerManager } : {}) };
  } catch (error) {
    const failure = startError(error, started);
    await stopInOrder(started);
    throw failure;
  }
}

/**
 * Starts kube-controller-manager against the kube-apiserver at `server` (healthy) and waits for its `/healthz`;
 * nothing when the assets have none or `ports` names no port for it. `spawned` is told of the process at once
 * (to record it); a failure leaves stopping it to the caller. Also finishes a start cut short after kube-apiserver.
 */
export async function launchControllerManager(
  props: Pick<
    LaunchProps,
    "assets" | "directory" | "ports" | "certificates" | "timeoutMs" | "signal" | "log"
  >,
  server: string,
  spawned: (process: ManagedProcess) => Promise<ManagedProcess>,
  dependencies: readonly ManagedProcess[] = [],
): Promise<ManagedProcess | undefined> {
  const binary = props.assets.kubeControllerManager;
  const port = props.ports.controllerManager;
  if (!binary || port === undefined) return undefined;
  const path = (name: string) => join(props.directory, name);
  const files = certificatePaths(props.directory);
  props.signal?.throwIfAborted();
  // The controllers a cluster needs to behave like one: garbage collection, namespace deletion,
  // ServiceAccounts and their tokens, the aggregated roles (view, edit, admin), CSR approval.
  props.log?.(`starting kube-controller-manager (health on 127.0.0.1:${port})`);
  const kubeconfig = path("controller-manager.kubeconfig");
  await writeFile(kubeconfig, kubeconfigYaml(adminKubeConfig(server, props.certificates)), { mode: 0o600 });
  const controllerManager = await spawned(
    startManagedProcess({
      name: "kube-controller-manager",
      command: binary,
      args: [
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${port}`,
        `--cert-dir=${path("controller-manager-certs")}`,
        `--service-account-private-key-file=${files.serviceAccountKey}`,
        `--root-ca-file=${files.caCert}`,
        "--leader-elect=false",
        "--profiling=false",
      ],
      logPath: path("kube-controller-manager.log"),
    }),
  );
  await waitUntilHealthy(
    controllerManager,
    props,
    () => insecureHealth(`https://127.0.0.1:${port}/healthz`),
    dependencies,
  );
  return controllerManager;
}

/**
 * The {@link ControlPlaneStartError} for `error`, with the last log lines of `processes` (an error that
 * is one already is returned as it is).
 */
export function startError(error: unknown, processes: readonly ManagedProcess[]): ControlPlaneStartError {
  if (error instanceof ControlPlaneStartError) return error;
  const logs = processes
    .map((p) => `--- last lines of ${p.name} (${p.logPath}) ---\n${p.tail(25)}`)
    .join("\n");
  const message = error instanceof Error ? error.message : String(error);
  return new ControlPlaneStartError(`control plane did not start: ${message}\n${logs}`, { cause: error });
}

/** Stops processes started in dependency order: kube-apiserver first, since without etcd it would spend its grace period retrying. */
export async function stopInOrder(started: readonly ManagedProcess[]): Promise<void> {
  for (const process of [...started].reverse()) await process.stop();
}

/**
 * Runs `start` up to three times while it fails because a port was taken between choosing it and
 * binding it (`attempt` counts from 1, so a caller can prefer its old ports on the first only).
 */
export async function retryWhenPortTaken<T>(
  start: (attempt: number) => Promise<T>,
  log: (message: string) => void = () => {},
): Promise<T> {
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(attempt);
    } catch (error) {
      const portTaken = error instanceof Error && /address already in use/.test(error.message);
      if (!portTaken || attempt >= attempts) throw error;
      log(`a port was taken meanwhile; retrying (${attempt}/${attempts - 1})`);
    }
  }
}

/** Whether a loopback HTTPS health endpoint with a self-signed certificate (kube-controller-manager's) answers 200. */
function insecureHealth(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** Whether kube-apiserver at `server` answers `/readyz` with 200 to the admin client certificate. */
export function apiServerReady(server: string, certs: ControlPlaneCertificates): Promise<boolean> {
  const tls = { ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey };
  return new Promise((resolve) => {
    const req = request(`${server}/readyz`, { ...tls, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** Polls `probe` until it answers true; fails early when `process` (or a dependency) exits or on abort. */
async function waitUntilHealthy(
  process: ManagedProcess,
  props: Pick<LaunchProps, "timeoutMs" | "signal">,
  probe: () => Promise<boolean>,
  dependencies: readonly ManagedProcess[] = [],
): Promise<void> {
  const deadline = Date.now() + props.timeoutMs;
  for (;;) {
    props.signal?.throwIfAborted();
    for (const p of [process, ...dependencies]) {
      if (p.hasExited())
        throw new Error(`${p.name} exited with ${await p.exited} before ${process.name} was healthy`);
    }
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${process.name} not healthy after ${props.timeoutMs} ms`);
    await sleep(100);
  }
}

async function httpHealth(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false;
  }
}
