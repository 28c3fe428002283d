/**
 * A throwaway garden: the project's kube-apiserver with Gardener's own API server (gardener-apiserver) aggregated
 * on it, set up the way Gardener's `test/envtest` package does it (front-proxy certificates on kube-apiserver,
 * an ExternalName Service and one APIService per Gardener group version), for tests and demos.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CustomObjectsApi, type KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { generateCertificates } from "../controlplane/certificates.ts";
import { type ControlPlane, startControlPlane } from "../controlplane/control-plane.ts";
import { findKubeAssets } from "../controlplane/kube-assets.ts";
import { retryWhenPortTaken } from "../controlplane/launch.ts";
import { guardLeftovers } from "../util/exit-cleanup.ts";
import { freePorts } from "../util/free-ports.ts";
import { type ManagedProcess, startManagedProcess } from "../util/managed-process.ts";
import { findGardenerAssets } from "./gardener-assets.ts";

/** The group versions gardener-apiserver serves (Gardener's `apiserver.AllGardenerAPIGroupVersions`). */
export const GARDENER_GROUP_VERSIONS = [
  { group: "core.gardener.cloud", version: "v1" },
  { group: "core.gardener.cloud", version: "v1beta1" },
  { group: "seedmanagement.gardener.cloud", version: "v1alpha1" },
  { group: "operations.gardener.cloud", version: "v1alpha1" },
  { group: "security.gardener.cloud", version: "v1alpha1" },
] as const;

/** Options of {@link startGarden}; every field is optional. */
export interface GardenProps {
  /** How long each process may take to become healthy, and the APIs to become served. Default 120 s. */
  readonly startTimeoutMs?: number;
  /**
   * Another address of this host the garden's API server must be reachable at (e.g. the gateway of kind's
   * Docker network, for an engine in a Pod): its kube-apiserver listens there too and its certificate names it.
   */
  readonly reachableAt?: string;
  /** Progress messages (default: none). */
  readonly log?: (message: string) => void;
}

/**
 * A running garden. Call {@link Garden.stop} when done (it is also stopped when this process exits). Its
 * `kubeConfig` and `kubeconfigPath` are its control plane's: admin access to the garden, as the backend's
 * ProviderConfig would get it from a Secret.
 */
export interface Garden extends Pick<ControlPlane, "kubeConfig" | "kubeconfigPath"> {
  /** The garden's kube-apiserver (Gardener's APIs aggregated on it), with admin access. */
  readonly controlPlane: ControlPlane;
  /** gardener-apiserver, with its own etcd. */
  readonly gardenerApiServer: ManagedProcess;
  readonly etcd: ManagedProcess;
  /** The Gardener version of the binary, e.g. `v1.150.0`. */
  readonly gardenerVersion: string;
  /** How long the start took, in ms (control plane, etcd, gardener-apiserver, APIs served). */
  readonly startMs: number;
  /** Stops gardener-apiserver, its etcd and the control plane, and removes their folders. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts a kube-apiserver with the aggregation layer's front-proxy settings, then gardener-apiserver (its etcd
 * under `/registry-gardener` like upstream, here in an etcd of its own), registers Gardener's APIServices and
 * waits until Shoots can be listed through kube-apiserver.
 *
 * Guarantees: on failure (and when this process exits) everything started is stopped and the folders removed;
 * the error carries gardener-apiserver's last log lines. Starts again with new ports when a port was taken
 * meanwhile (twice at most).
 */
export function startGarden(props: GardenProps = {}): Promise<Garden> {
  return retryWhenPortTaken(() => startGardenOnce(props), props.log);
}

async function startGardenOnce(props: GardenProps): Promise<Garden> {
  const started = Date.now();
  const log = props.log ?? (() => {});
  const timeoutMs = props.startTimeoutMs ?? 120_000;
  const gardener = findGardenerAssets();
  const kube = findKubeAssets();
  const parts = new GardenParts(await mkdtemp(join(tmpdir(), "openmcp-garden-")));
  const proxy = await writeFrontProxyCertificates(parts);
  try {
    const controlPlane = await startFrontProxiedControlPlane(parts, props, timeoutMs);
    parts.controlPlane = controlPlane;
    const [etcdPort, etcdPeerPort, port] = (await freePorts(3)) as [number, number, number];
    log(`starting gardener's etcd on 127.0.0.1:${etcdPort}`);
    const etcd = parts.spawn(gardenerEtcd(parts, kube.etcd, etcdPort, etcdPeerPort));
    await until(timeoutMs, [etcd], "gardener's etcd", () => httpOk(`http://127.0.0.1:${etcdPort}/health`));

    log(`starting gardener-apiserver ${gardener.version} on https://127.0.0.1:${port}`);
    const apiServer = parts.spawn(gardenerApiServer(parts, gardener.apiServer, controlPlane, etcdPort, port));
    await until(timeoutMs, [apiServer, etcd], "gardener-apiserver", () =>
      httpsOk(`https://127.0.0.1:${port}/healthz`, proxy.caCert),
    );
    await registerApiServices(controlPlane.kubeConfig, port, proxy.caCert);
    await waitForGardenerApis(parts, controlPlane, apiServer, timeoutMs);
    const startMs = Date.now() - started;
    log(`garden ready in ${startMs} ms`);
    let stopping: Promise<void> | undefined;
    return {
      controlPlane,
      kubeConfig: controlPlane.kubeConfig,
      kubeconfigPath: controlPlane.kubeconfigPath,
      gardenerApiServer: apiServer,
      etcd,
      gardenerVersion: gardener.version,
      startMs,
      stop: () => {
        stopping ??= parts.stopAll();
        return stopping;
      },
    };
  } catch (error) {
    const tails = parts.processes.map((p) => `--- last lines of ${p.name} (${p.logPath}) ---\n${p.tail(25)}`);
    await parts.stopAll();
    throw new Error(
      `garden did not start: ${(error as Error).message} ${parts.lastProblem}\n${tails.join("\n")}`,
      {
        cause: error,
      },
    );
  }
}

/** What one start of a garden has made so far, stopped and removed together (on failure, or by the garden's stop). */
class GardenParts {
  readonly directory: string;
  readonly processes: ManagedProcess[] = [];
  controlPlane: ControlPlane | undefined;
  /** What the APIServices said last while not available, for the error. */
  lastProblem = "";
  #release = () => {};

  constructor(directory: string) {
    this.directory = directory;
  }

  /** A file in the garden's folder. */
  path(name: string): string {
    return join(this.directory, name);
  }

  /** Takes on a started process: it is stopped with the rest, and when this process exits. */
  spawn(process: ManagedProcess): ManagedProcess {
    this.processes.push(process);
    this.#release();
    this.#release = guardLeftovers({
      processGroups: this.processes.map((p) => p.pid),
      directory: this.directory,
    });
    return process;
  }

  async stopAll(): Promise<void> {
    for (const process of [...this.processes].reverse()) await process.stop();
    await this.controlPlane?.stop();
    this.#release();
    await rm(this.directory, { recursive: true, force: true });
  }
}

/**
 * One CA for the front proxy: it signs kube-apiserver's proxy client certificate, which gardener-apiserver
 * trusts through extension-apiserver-authentication, and gardener-apiserver's serving certificate, which
 * the APIServices' caBundle names.
 */
async function writeFrontProxyCertificates(parts: GardenParts) {
  const proxy = await generateCertificates({
    // kube-apiserver checks the serving certificate against the Service's name, whatever address it dials.
    hosts: ["127.0.0.1", "localhost", "gardener-apiserver.kube-system.svc"],
    clientName: "front-proxy",
    clientGroups: [],
    now: new Date(),
  });
  await Promise.all([
    writeFile(parts.path("proxy-ca.crt"), proxy.caCert),
    writeFile(parts.path("proxy-client.crt"), proxy.clientCert),
    writeFile(parts.path("proxy-client.key"), proxy.clientKey, { mode: 0o600 }),
    writeFile(parts.path("gardener-apiserver.crt"), proxy.servingCert),
    writeFile(parts.path("gardener-apiserver.key"), proxy.servingKey, { mode: 0o600 }),
  ]);
  return proxy;
}

/** The garden's kube-apiserver, with the aggregation layer's front-proxy settings. */
function startFrontProxiedControlPlane(parts: GardenParts, props: GardenProps, timeoutMs: number) {
  return startControlPlane({
    log: props.log ?? (() => {}),
    startTimeoutMs: timeoutMs,
    ...(props.reachableAt ? { reachableAt: props.reachableAt } : {}),
    extraApiServerArgs: [
      "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      "--requestheader-group-headers=X-Remote-Group",
      "--requestheader-username-headers=X-Remote-User",
      `--requestheader-client-ca-file=${parts.path("proxy-ca.crt")}`,
      `--proxy-client-cert-file=${parts.path("proxy-client.crt")}`,
      `--proxy-client-key-file=${parts.path("proxy-client.key")}`,
    ],
  });
}

/** gardener-apiserver's own etcd. */
function gardenerEtcd(parts: GardenParts, command: string, port: number, peerPort: number): ManagedProcess {
  return startManagedProcess({
    name: "gardener-etcd",
    command,
    args: [
      `--data-dir=${parts.path("etcd")}`,
      `--listen-client-urls=http://127.0.0.1:${port}`,
      `--advertise-client-urls=http://127.0.0.1:${port}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    logPath: parts.path("etcd.log"),
  });
}

/** gardener-apiserver on `port`, with its etcd on `etcdPort`, authenticating and authorizing through `controlPlane`. */
function gardenerApiServer(
  parts: GardenParts,
  command: string,
  controlPlane: ControlPlane,
  etcdPort: number,
  port: number,
): ManagedProcess {
  return startManagedProcess({
    name: "gardener-apiserver",
    command,
    args: [
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      `--tls-cert-file=${parts.path("gardener-apiserver.crt")}`,
      `--tls-private-key-file=${parts.path("gardener-apiserver.key")}`,
      "--cluster-identity=openmcp-engine-garden",
      "--authorization-always-allow-paths=/healthz",
      `--authentication-kubeconfig=${controlPlane.kubeconfigPath}`,
      `--authorization-kubeconfig=${controlPlane.kubeconfigPath}`,
      `--kubeconfig=${controlPlane.kubeconfigPath}`,
      // Lifecycle stages of CloudProfile versions (GEP-32) are alpha; the backend reads them, so they are on.
      "--feature-gates=VersionClassificationLifecycle=true",
      "--log-format=text",
      "--profiling=false",
    ],
    logPath: parts.path("gardener-apiserver.log"),
  });
}

/** Waits until Shoots and CredentialsBindings can be listed through kube-apiserver, noting what the APIServices say meanwhile. */
async function waitForGardenerApis(
  parts: GardenParts,
  controlPlane: ControlPlane,
  apiServer: ManagedProcess,
  timeoutMs: number,
): Promise<void> {
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await until(timeoutMs, [apiServer], "Gardener's APIs through kube-apiserver", async () => {
    parts.lastProblem = await apiServiceProblems(controlPlane.kubeConfig);
    try {
      await custom.listClusterCustomObject({
        group: "core.gardener.cloud",
        version: "v1beta1",
        plural: "shoots",
      });
      await custom.listClusterCustomObject({
        group: "security.gardener.cloud",
        version: "v1alpha1",
        plural: "credentialsbindings",
      });
      return true;
    } catch {
      return false;
    }
  });
}

/** The Service and APIServices that route Gardener's groups from kube-apiserver to gardener-apiserver. */
async function registerApiServices(kubeConfig: KubeConfig, port: number, caCert: string): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  await api.create({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "gardener-apiserver", namespace: "kube-system" },
    spec: { type: "ExternalName", externalName: "localhost" },
  });
  for (const { group, version } of GARDENER_GROUP_VERSIONS) {
    await api.create({
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: `${version}.${group}` },
      spec: {
        service: { name: "gardener-apiserver", namespace: "kube-system", port },
        group,
        version,
        groupPriorityMinimum: 100,
        versionPriority: 100,
        caBundle: Buffer.from(caCert).toString("base64"),
      },
    } as never);
  }
}

/** The Available conditions of Gardener's APIServices that are not True, in a line. */
async function apiServiceProblems(kubeConfig: KubeConfig | undefined): Promise<string> {
  if (!kubeConfig) return "";
  try {
    const list = (await kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
      group: "apiregistration.k8s.io",
      version: "v1",
      plural: "apiservices",
    })) as {
      items: {
        metadata: { name: string };
        status?: { conditions?: { type: string; status: string; message?: string }[] };
      }[];
    };
    return list.items
      .filter((item) => item.metadata.name.includes("gardener.cloud"))
      .map((item) => {
        const available = item.status?.conditions?.find((c) => c.type === "Available");
        return available?.status === "True"
          ? ""
          : `${item.metadata.name}: ${available?.message ?? "no status"}`;
      })
      .filter(Boolean)
      .join("; ");
  } catch (error) {
    return `(APIServices unreadable: ${(error as Error).message.split("\n")[0]})`;
  }
}

/** Polls `probe` every 100 ms until it answers true; fails when a process exits or after `timeoutMs`. */
async function until(
  timeoutMs: number,
  processes: readonly ManagedProcess[],
  what: string,
  probe: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const p of processes) {
      if (p.hasExited()) throw new Error(`${p.name} exited with ${await p.exited} before ${what} was ready`);
    }
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function httpOk(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

function httpsOk(url: string, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ca, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}
