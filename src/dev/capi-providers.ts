/**
 * Runs Cluster API as a management cluster needs it for ClusterClass topologies on Docker machines: the core
 * manager with the ClusterTopology feature gate, the kubeadm control-plane and bootstrap managers, and the Docker
 * infrastructure provider (CAPD), each through `startCapiManager` (they share its flags), for the tests and demos
 * of the `capi` backend.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { acquireDirectoryLock } from "../util/directory-lock.ts";
import type { CapiAssets } from "./capi-assets.ts";
import { type CapiManager, type CapiManagerProps, startCapiManager } from "./capi-manager.ts";
import { CAPI_PROVIDERS, type CapiProvider, findCapiProvidersAssets } from "./capi-providers-assets.ts";

/** ClusterClass and managed topologies are an alpha feature of every Cluster API manager. */
const TOPOLOGY_GATES = ["ClusterTopology"];

/** How to start the stack. */
export interface CapiStackProps {
  /** Admin access to the API server the managers manage (the management cluster). */
  readonly kubeConfig: KubeConfig;
  /** Installs CRDs from a folder and waits until they are served (the runtime's `installCrds`). */
  readonly installCrds: NonNullable<CapiManagerProps["installCrds"]>;
  /** Default: the core manager from hack/capi/build.sh. */
  readonly coreAssets?: CapiAssets;
  /** Default: {@link findCapiProvidersAssets}. */
  readonly providerAssets?: Readonly<Record<CapiProvider, CapiAssets>>;
  /**
   * The address CAPD's in-memory backend serves its simulated workload API servers on (`POD_IP` of its
   * manager). Default `127.0.0.1`: the engine, on this host, must reach them.
   */
  readonly inMemoryAddress?: string;
  readonly log?: (message: string) => void;
  /**
   * How long to wait for another stack on this machine to stop (default 20 min). CAPD's in-memory backend binds
   * fixed ports (19000, and 20000 up for its workload API servers) that no flag changes, so one CAPD runs per
   * machine: a second stack waits its turn instead of failing with `bind: address already in use`.
   */
  readonly machineLockWaitMs?: number;
}

/** The folder whose lock says which process runs this machine's CAPD. */
const CAPD_LOCK_DIRECTORY = join(tmpdir(), "openmcp-engine-capd");

/** The four running managers. */
export interface CapiStack {
  readonly version: string;
  readonly managers: Readonly<Record<"core" | CapiProvider, CapiManager>>;
  /** The last lines of every manager's log, for failure messages. */
  logTails(lines?: number): string;
  /** Stops every manager; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the core manager (its CRDs first: the providers' CRDs refer to its kinds), then the three providers side
 * by side. Guarantees: on failure nothing is left running, and the error names the manager and carries its log.
 */
export async function startCapiStack(props: CapiStackProps): Promise<CapiStack> {
  const providers = props.providerAssets ?? findCapiProvidersAssets();
  mkdirSync(CAPD_LOCK_DIRECTORY, { recursive: true });
  const releaseMachine = await acquireDirectoryLock(CAPD_LOCK_DIRECTORY, {
    waitMs: props.machineLockWaitMs ?? 20 * 60_000,
    staleAfterMs: 24 * 3_600_000, // a dead holder is noticed by its pid at once
  });
  if (!releaseMachine)
    throw new Error(
      `another Cluster API Docker provider (CAPD) runs on this machine (see ${CAPD_LOCK_DIRECTORY}/lock); it binds fixed ports, so stop it first`,
    );
  try {
    return await startStackAlone(props, providers, releaseMachine);
  } catch (error) {
    await releaseMachine();
    throw error;
  }
}

async function startStackAlone(
  props: CapiStackProps,
  providers: Readonly<Record<CapiProvider, CapiAssets>>,
  releaseMachine: () => Promise<void>,
): Promise<CapiStack> {
  const common = { kubeConfig: props.kubeConfig, ...(props.log ? { log: props.log } : {}) };
  const core = await startCapiManager({
    ...common,
    installCrds: props.installCrds,
    ...(props.coreAssets ? { assets: props.coreAssets } : {}),
    featureGates: TOPOLOGY_GATES,
  });
  // Every provider's CRDs are served before any provider starts: the kubeadm control plane's manager reads the
  // bootstrap provider's KubeadmConfig at start and exits if that kind is not served yet.
  await Promise.all(
    Object.values(providers).map((assets) =>
      props.installCrds(props.kubeConfig, { directory: assets.crdDirectory }),
    ),
  );
  const launch = (provider: CapiProvider, env?: NodeJS.ProcessEnv) =>
    startCapiManager({
      ...common,
      assets: providers[provider],
      name: CAPI_PROVIDERS[provider],
      featureGates: TOPOLOGY_GATES,
      ...(env ? { env } : {}),
    });
  // Side by side, and all settled before deciding: a failure must not leave a sibling starting unseen.
  const outcomes = await Promise.allSettled([
    launch("kubeadmControlPlane"),
    launch("kubeadmBootstrap"),
    launch("docker", { ...process.env, POD_IP: props.inMemoryAddress ?? "127.0.0.1" }),
  ]);
  const started = [core, ...outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []))];
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
  if (failure) {
    await Promise.all(started.map((manager) => manager.stop()));
    throw failure.reason;
  }
  const [kubeadmControlPlane, kubeadmBootstrap, docker] = started.slice(1) as [
    CapiManager,
    CapiManager,
    CapiManager,
  ];
  const managers = { core, kubeadmControlPlane, kubeadmBootstrap, docker };
  let stopping: Promise<void> | undefined;
  return {
    version: core.version,
    managers,
    logTails: (lines = 20) =>
      Object.entries(managers)
        .map(([name, manager]) => `--- ${name}:\n${manager.logTail(lines)}`)
        .join("\n"),
    stop: () => {
      stopping ??= Promise.all(started.map((manager) => manager.stop())).then(releaseMachine);
      return stopping;
    },
  };
}
