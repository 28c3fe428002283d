/** Starts a real etcd + kube-apiserver on loopback for tests, the demo and the `local` backend. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { installCrds } from "../runtime/install-crds.ts";
import { generateCertificates } from "./certificates.ts";
import { guardLeftovers } from "./exit-cleanup.ts";
import { freePorts } from "./free-ports.ts";
import { findKubeAssets, type KubeAssets } from "./kube-assets.ts";
import { type ManagedProcess, startManagedProcess } from "./managed-process.ts";

/** Options of {@link startControlPlane}; every field is optional. */
export interface ControlPlaneProps {
  /** Folder of CRD YAML to install and wait for (e.g. the repository's `crds/`). */
  readonly crdDirectory?: string;
  /** Folder holding `kube-apiserver` and `etcd`; default: see {@link findKubeAssets}. */
  readonly assetsDirectory?: string;
  /** Parent of the control plane's temporary folder; default: the OS temp folder. */
  readonly parentDirectory?: string;
  /** How long to wait for both processes to become healthy. Default 90 s. */
  readonly startTimeoutMs?: number;
  /** Extra kube-apiserver flags, `--name=value`, appended last so they win. */
  readonly extraApiServerArgs?: readonly string[];
  /** Progress messages (default: none). */
  readonly log?: (message: string) => void;
}

/** A running control plane. Call {@link ControlPlane.stop} when done (it is also stopped on exit). */
export interface ControlPlane {
  /** Admin access (`system:masters`) for @kubernetes/client-node. */
  readonly kubeConfig: KubeConfig;
  /** The same access as a kubeconfig file, for kubectl. */
  readonly kubeconfigPath: string;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** Temporary folder with data, certificates, logs; removed by stop. */
  readonly directory: string;
  readonly etcd: ManagedProcess;
  readonly apiServer: ManagedProcess;
  /** Stops both processes and removes {@link directory}. Safe to call twice. */
  stop(): Promise<void>;
}

/** Thrown when the control plane does not come up; the message carries the processes' last log lines. */
export class ControlPlaneStartError extends Error {
  override readonly name = "ControlPlaneStartError";
}

const attempts = 3;

/**
 * Starts etcd and kube-apiserver with fresh certificates on free loopback ports, waits until both are
 * healthy, installs the CRDs and waits until they are served.
 *
 * Guarantees: on success nothing is shared with any other control plane (ports, data, certificates);
 * on failure, and whenever this process exits or is killed, both processes are stopped and the
 * temporary folder is removed. Retries twice with new ports when a port was taken meanwhile.
 */
export async function startControlPlane(props: ControlPlaneProps = {}): Promise<ControlPlane> {
  const assets = findKubeAssets(props.assetsDirectory);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(assets, props);
    } catch (error) {
      const portTaken =
        error instanceof ControlPlaneStartError && /address already in use/.test(error.message);
      if (!portTaken || attempt >= attempts) throw error;
      props.log?.(`a port was taken meanwhile; retrying (${attempt}/${attempts - 1})`);
    }
  }
}

async function startOnce(assets: KubeAssets, props: ControlPlaneProps): Promise<ControlPlane> {
  const log = props.log ?? (() => {});
  const timeoutMs = props.startTimeoutMs ?? 90_000;
  const directory = await mkdtemp(join(props.parentDirectory ?? tmpdir(), "openmcp-controlplane-"));
  const path = (name: string) => join(directory, name);
  const [etcdPort, peerPort, apiPort] = (await freePorts(3)) as [number, number, number];
  const server = `https://127.0.0.1:${apiPort}`;

  const certs = await generateCertificates({
    hosts: ["127.0.0.1", "localhost"],
    clientName: "openmcp-engine-admin",
    clientGroups: ["system:masters"],
    now: new Date(),
  });
  await Promise.all([
    writeFile(path("ca.crt"), certs.caCert),
    writeFile(path("apiserver.crt"), certs.servingCert),
    writeFile(path("apiserver.key"), certs.servingKey, { mode: 0o600 }),
    writeFile(path("sa.key"), certs.serviceAccountKey, { mode: 0o600 }),
    writeFile(path("sa.pub"), certs.serviceAccountPublicKey),
  ]);

  const started: ManagedProcess[] = [];
  let release = () => {};
  const stopAll = async () => {
    // kube-apiserver first: without etcd it would spend its grace period retrying.
    for (const process of [...started].reverse()) await process.stop();
    release();
    await rm(directory, { recursive: true, force: true });
  };

  try {
    log(`starting etcd on 127.0.0.1:${etcdPort}`);
    const etcd = startManagedProcess({
      name: "etcd",
      command: assets.etcd,
      args: [
        `--data-dir=${path("etcd")}`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        "--unsafe-no-fsync", // throwaway data: durability is not worth the disk latency
        "--log-level=warn",
      ],
      logPath: path("etcd.log"),
    });
    started.push(etcd);
    release = guardLeftovers({ processGroups: [etcd.pid], directory });
    await waitUntilHealthy(etcd, timeoutMs, () => httpHealth(`http://127.0.0.1:${etcdPort}/health`));

    log(`starting kube-apiserver on ${server}`);
    const apiServer = startManagedProcess({
      name: "kube-apiserver",
      command: assets.kubeApiserver,
      args: [
        "--advertise-address=127.0.0.1",
        "--bind-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--cert-dir=${path("certs")}`,
        `--tls-cert-file=${path("apiserver.crt")}`,
        `--tls-private-key-file=${path("apiserver.key")}`,
        `--client-ca-file=${path("ca.crt")}`,
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${path("sa.pub")}`,
        `--service-account-signing-key-file=${path("sa.key")}`,
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        // No controller-manager runs, so nothing creates the `default` ServiceAccount pods would need.
        "--disable-admission-plugins=ServiceAccount",
        // Endpoints may not point at loopback; nothing needs the in-cluster `kubernetes` Service here.
        "--endpoint-reconciler-type=none",
        "--profiling=false",
        ...(props.extraApiServerArgs ?? []),
      ],
      logPath: path("kube-apiserver.log"),
    });
    started.push(apiServer);
    release();
    release = guardLeftovers({ processGroups: [etcd.pid, apiServer.pid], directory });
    const tls = { ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey };
    await waitUntilHealthy(apiServer, timeoutMs, () => httpsHealth(`${server}/readyz`, tls), [etcd]);

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: "local", server, caData: base64(certs.caCert) }],
      users: [{ name: "admin", certData: base64(certs.clientCert), keyData: base64(certs.clientKey) }],
      contexts: [{ name: "local", cluster: "local", user: "admin" }],
      currentContext: "local",
    });
    const kubeconfigPath = path("kubeconfig");
    await writeFile(kubeconfigPath, kubeconfigYaml(kubeConfig), { mode: 0o600 });

    if (props.crdDirectory) {
      log(`installing CRDs from ${props.crdDirectory}`);
      const names = await installCrds(kubeConfig, { directory: resolve(props.crdDirectory), timeoutMs });
      log(`CRDs served: ${names.join(", ")}`);
    }

    let stopping: Promise<void> | undefined;
    return {
      kubeConfig,
      kubeconfigPath,
      server,
      directory,
      etcd,
      apiServer,
      stop: () => {
        stopping ??= stopAll();
        return stopping;
      },
    };
  } catch (error) {
    const logs = started
      .map((p) => `--- last lines of ${p.name} (${p.logPath}) ---\n${p.tail(25)}`)
      .join("\n");
    await stopAll();
    const message = error instanceof Error ? error.message : String(error);
    throw new ControlPlaneStartError(`control plane did not start: ${message}\n${logs}`, { cause: error });
  }
}

/** A kubeconfig file's text (YAML) for the given config. */
export function kubeconfigYaml(kubeConfig: KubeConfig): string {
  return stringify(JSON.parse(kubeConfig.exportConfig()));
}

function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}

/** Polls `probe` until it answers true; fails early when `process` (or a dependency) exits. */
async function waitUntilHealthy(
  process: ManagedProcess,
  timeoutMs: number,
  probe: () => Promise<boolean>,
  dependencies: readonly ManagedProcess[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const p of [process, ...dependencies]) {
      if (p.hasExited())
        throw new Error(`${p.name} exited with ${await p.exited} before ${process.name} was healthy`);
    }
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${process.name} not healthy after ${timeoutMs} ms`);
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

function httpsHealth(url: string, tls: { ca: string; cert: string; key: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ...tls, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}
