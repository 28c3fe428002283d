/** Starts a throwaway etcd + kube-apiserver on loopback (tests, the demo) that goes away on stop or when this process ends. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { guardLeftovers } from "../util/exit-cleanup.ts";
import { freePorts } from "../util/free-ports.ts";
import type { ManagedProcess } from "../util/managed-process.ts";
import { generateLoopbackCertificates } from "./certificates.ts";
import { adminKubeConfig, kubeconfigYaml, writeCertificates } from "./control-plane-files.ts";
import { findKubeAssets, type KubeAssets } from "./kube-assets.ts";
import { launchControlPlane, retryWhenPortTaken, startError, stopInOrder } from "./launch.ts";

export { kubeconfigYaml } from "./control-plane-files.ts";
export { ControlPlaneStartError } from "./launch.ts";

/** Options of {@link startControlPlane}; every field is optional. */
export interface ControlPlaneProps {
  /**
   * Runs once the API server is healthy, before the start resolves — e.g. installing CRDs (the
   * runtime's `installCrds`); if it fails, the control plane is stopped and the start fails with it.
   */
  readonly prepare?: (kubeConfig: KubeConfig) => Promise<void>;
  /** Folder holding `kube-apiserver` and `etcd`; default: see {@link findKubeAssets}. */
  readonly assetsDirectory?: string;
  /** Parent of the control plane's temporary folder; default: the OS temp folder. */
  readonly parentDirectory?: string;
  /** How long to wait for both processes to become healthy. Default 90 s. */
  readonly startTimeoutMs?: number;
  /** Extra kube-apiserver flags, `--name=value`, appended last so they win. */
  readonly extraApiServerArgs?: readonly string[];
  /**
   * More CAs (PEM) whose client certificates the API server accepts beside its own (e.g. the client CA of a
   * Gardener Shoot, whose `adminkubeconfig` Gardener signs with it).
   */
  readonly extraClientCertificateAuthorities?: string;
  /**
   * An address of this host other than loopback from which the API server must be reachable too (e.g. its
   * gateway on a Docker network, for Pods of a kind cluster): the API server then listens on every interface
   * and its serving certificate names this address. Default: loopback only.
   */
  readonly reachableAt?: string;
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
  /** `https://<reachableAt>:<port>`, when started with {@link ControlPlaneProps.reachableAt}. */
  readonly reachableServer?: string;
  /** Temporary folder with data, certificates, logs; removed by stop. */
  readonly directory: string;
  /** The processes of the last start (after {@link resume}, the new ones). */
  readonly etcd: ManagedProcess;
  readonly apiServer: ManagedProcess;
  /**
   * Stops the processes but keeps {@link directory} (data, certificates) and the ports, for {@link resume}: what a
   * hibernated cluster's control plane is. Idempotent.
   */
  pause(): Promise<void>;
  /**
   * Starts the processes again after {@link pause} on the same data, certificates, ports and flags, so clients of
   * before (kubeconfigs, tokens) work again; waits until healthy. Idempotent (running: nothing happens). Fails
   * when a port was taken meanwhile (the control plane then stays paused, a later resume may succeed).
   */
  resume(): Promise<void>;
  /** Stops both processes and removes {@link directory}. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts etcd and kube-apiserver with fresh certificates on free loopback ports, waits until both are
 * healthy, installs the CRDs and waits until they are served.
 *
 * Guarantees: on success nothing is shared with any other control plane (ports, data, certificates);
 * on failure, and whenever this process exits or is killed, both processes are stopped and the
 * temporary folder is removed. Retries twice with new ports when a port was taken meanwhile.
 * For a control plane that outlives this process, see `persistent-control-plane.ts`.
 */
export async function startControlPlane(props: ControlPlaneProps = {}): Promise<ControlPlane> {
  const assets = findKubeAssets(props.assetsDirectory);
  return retryWhenPortTaken(() => startOnce(assets, props), props.log);
}

async function startOnce(assets: KubeAssets, props: ControlPlaneProps): Promise<ControlPlane> {
  const log = props.log ?? (() => {});
  const timeoutMs = props.startTimeoutMs ?? 90_000;
  const directory = await mkdtemp(join(props.parentDirectory ?? tmpdir(), "openmcp-controlplane-"));
  const [etcd, etcdPeer, apiServer, controllerManager] = (await freePorts(4)) as [
    number,
    number,
    number,
    number,
  ];
  const certificates = await generateLoopbackCertificates(
    new Date(),
    props.reachableAt ? [props.reachableAt] : [],
  );
  await writeCertificates(directory, certificates);
  const clientCaArgs: string[] = [];
  if (props.extraClientCertificateAuthorities) {
    const bundle = join(directory, "client-ca-bundle.crt");
    await writeFile(
      bundle,
      `${certificates.caCert.trim()}\n${props.extraClientCertificateAuthorities.trim()}\n`,
    );
    clientCaArgs.push(`--client-ca-file=${bundle}`);
  }
  // kube-apiserver listens on one address; loopback (its health checks, the host's clients) and another need all.
  const bindArgs = props.reachableAt ? ["--bind-address=0.0.0.0"] : [];
  const extraApiServerArgs = [...clientCaArgs, ...bindArgs, ...(props.extraApiServerArgs ?? [])];

  let started: readonly ManagedProcess[] = [];
  let release = () => {};
  const stopAll = async () => {
    await stopInOrder(started);
    release();
    await rm(directory, { recursive: true, force: true });
  };

  const launch = () =>
    launchControlPlane({
      assets,
      directory,
      ports: { etcd, etcdPeer, apiServer, controllerManager },
      certificates,
      timeoutMs,
      durable: false,
      ...(extraApiServerArgs.length > 0 ? { extraApiServerArgs } : {}),
      log,
      onSpawn: (processes) => {
        started = processes;
        release();
        release = guardLeftovers({ processGroups: processes.map((p) => p.pid), directory });
      },
    });
  try {
    let launched = await launch();
    const kubeConfig = adminKubeConfig(launched.server, certificates);
    const kubeconfigPath = join(directory, "kubeconfig");
    await writeFile(kubeconfigPath, kubeconfigYaml(kubeConfig), { mode: 0o600 });

    await props.prepare?.(kubeConfig);

    let stopping: Promise<void> | undefined;
    let paused = false;
    /** Pause and resume one after the other, never both at once. */
    let turn: Promise<unknown> = Promise.resolve();
    const inTurn = (step: () => Promise<void>): Promise<void> => {
      const next = turn.then(step);
      turn = next.catch(() => {});
      return next;
    };
    const server = launched.server;
    const port = new URL(server).port;
    return {
      server,
      get etcd() {
        return launched.etcd;
      },
      get apiServer() {
        return launched.apiServer;
      },
      ...(props.reachableAt ? { reachableServer: `https://${props.reachableAt}:${port}` } : {}),
      kubeConfig,
      kubeconfigPath,
      directory,
      pause: () =>
        inTurn(async () => {
          if (paused || stopping) return;
          await stopInOrder(started);
          // Their pids may be reused while it sleeps: from now on only the folder is cleaned up on exit.
          release();
          release = guardLeftovers({ processGroups: [], directory });
          paused = true;
        }),
      resume: () =>
        inTurn(async () => {
          if (!paused || stopping) return;
          launched = await launch(); // on failure it stops what it started; still paused
          paused = false;
        }),
      stop: () => {
        stopping ??= stopAll();
        return stopping;
      },
    };
  } catch (error) {
    const failure = startError(error, started);
    await stopAll();
    throw failure;
  }
}
