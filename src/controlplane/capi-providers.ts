/**
 * Runs Cluster API as a management cluster needs it for ClusterClass topologies on Docker machines: the core
 * manager with the ClusterTopology feature gate, the kubeadm control-plane and bootstrap managers, and the Docker
 * infrastructure provider (CAPD), each through `startCapiManager` (they share its flags), for the tests and demos
 * of the `capi` backend.
 */
import type { KubeConfig } from "@kubernetes/client-node";
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
  readonly installCrds: CapiManagerProps["installCrds"];
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
}

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
  const common = {
    kubeConfig: props.kubeConfig,
    installCrds: props.installCrds,
    ...(props.log ? { log: props.log } : {}),
  };
  const core = await startCapiManager({
    ...common,
    ...(props.coreAssets ? { assets: props.coreAssets } : {}),
    featureGates: TOPOLOGY_GATES,
  });
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
      stopping ??= Promise.all(started.map((manager) => manager.stop())).then(() => {});
      return stopping;
    },
  };
}
