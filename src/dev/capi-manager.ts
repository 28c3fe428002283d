/**
 * Runs Cluster API's own core manager (the controllers of cluster.x-k8s.io) against an API server, for the
 * tests and the demo: its CRDs installed, a self-signed certificate for its webhook server, every port on
 * loopback, stopped with the caller (and by the exit watchdog if the caller dies).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeConfig } from "@kubernetes/client-node";
import { generateLoopbackCertificates } from "../controlplane/certificates.ts";
import { kubeconfigYaml } from "../controlplane/control-plane-files.ts";
import { retryWhenPortTaken } from "../controlplane/launch.ts";
import { guardLeftovers } from "../util/exit-cleanup.ts";
import { freePorts } from "../util/free-ports.ts";
import { type ManagedProcess, startManagedProcess } from "../util/managed-process.ts";
import { type CapiAssets, findCapiAssets } from "./capi-assets.ts";

/** How to start the manager. */
export interface CapiManagerProps {
  /** Admin access to the API server it manages. */
  readonly kubeConfig: KubeConfig;
  /**
   * Installs CRDs from a folder and waits until they are served (the runtime's `installCrds`). Omitted where the
   * caller has them served already.
   */
  readonly installCrds?: (kubeConfig: KubeConfig, props: { readonly directory: string }) => Promise<unknown>;
  /** Default: {@link findCapiAssets}. */
  readonly assets?: CapiAssets;
  /** Cluster API feature gates to turn on, e.g. `ClusterTopology` (ClusterClasses; off by default in v1.14). */
  readonly featureGates?: readonly string[];
  /** How long to wait for /readyz. Default 60 s. */
  readonly startTimeoutMs?: number;
  readonly log?: (message: string) => void;
  /**
   * For another manager of Cluster API's family (they share these flags; see capi-providers.ts): its name in
   * messages (default `capi-manager`) and its environment.
   */
  readonly name?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** A running Cluster API manager. */
export interface CapiManager {
  readonly version: string;
  readonly process: ManagedProcess;
  /** The last lines of its log, for failure messages. */
  logTail(lines?: number): string;
  /** Stops it and removes its folder; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Installs Cluster API's CRDs, then starts its manager and resolves once it reports ready.
 * Guarantees: on failure nothing is left running, and the error carries the manager's last log lines.
 */
export async function startCapiManager(props: CapiManagerProps): Promise<CapiManager> {
  const log = props.log ?? (() => {});
  const assets = props.assets ?? findCapiAssets();
  const name = props.name ?? "capi-manager";
  if (props.installCrds) {
    log(`installing ${name} ${assets.version} CRDs`);
    await props.installCrds(props.kubeConfig, { directory: assets.crdDirectory });
  }
  // Free ports are only free until somebody binds them: a manager that lost one to another process starts again.
  return retryWhenPortTaken(() => startOnce(props, assets, name, log), log);
}

async function startOnce(
  props: CapiManagerProps,
  assets: ReturnType<typeof findCapiAssets>,
  name: string,
  log: (message: string) => void,
): Promise<CapiManager> {
  const directory = await mkdtemp(join(tmpdir(), `openmcp-${name}-`));
  const certificates = await generateLoopbackCertificates();
  const certDirectory = join(directory, "webhook-certs");
  await writeFile(join(directory, "kubeconfig"), kubeconfigYaml(props.kubeConfig), { mode: 0o600 });
  await mkdirWith(certDirectory, {
    "tls.crt": certificates.servingCert,
    "tls.key": certificates.servingKey,
  });
  const [webhook, health, diagnostics] = (await freePorts(3)) as [number, number, number];
  const manager = startManagedProcess({
    name,
    command: assets.manager,
    args: [
      `--kubeconfig=${join(directory, "kubeconfig")}`,
      "--leader-elect=false",
      `--webhook-port=${webhook}`,
      `--webhook-cert-dir=${certDirectory}`,
      `--health-addr=127.0.0.1:${health}`,
      `--diagnostics-address=127.0.0.1:${diagnostics}`,
      "--insecure-diagnostics",
      ...(props.featureGates?.length
        ? [`--feature-gates=${props.featureGates.map((gate) => `${gate}=true`).join(",")}`]
        : []),
    ],
    logPath: join(directory, `${name}.log`),
    ...(props.env ? { env: props.env } : {}),
  });
  const release = guardLeftovers({ processGroups: [manager.pid], directory });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await manager.stop();
      release();
      await rm(directory, { recursive: true, force: true });
    })();
    return stopping;
  };
  try {
    await waitReady(manager, `http://127.0.0.1:${health}/readyz`, props.startTimeoutMs ?? 60_000);
  } catch (error) {
    const tail = manager.tail(30);
    await stop();
    throw new Error(`Cluster API's ${name} did not become ready: ${(error as Error).message}\n${tail}`, {
      cause: error,
    });
  }
  log(`Cluster API ${assets.version} ${name} ready (pid ${manager.pid})`);
  return { version: assets.version, process: manager, logTail: (lines = 40) => manager.tail(lines), stop };
}

async function mkdirWith(directory: string, files: Readonly<Record<string, string>>): Promise<void> {
  await mkdir(directory, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(directory, name), content, { mode: 0o600 });
  }
}

async function waitReady(manager: ManagedProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (manager.hasExited()) throw new Error(`it exited (${await manager.exited})`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
      last = `${url} answered ${response.status}`;
    } catch (error) {
      last = `${url}: ${(error as Error).message}`;
    }
    await sleep(250);
  }
  throw new Error(`not ready after ${timeoutMs} ms (${last})`);
}
