/**
 * The world of a heavy file that drives the `kind` backend from an engine in the test's process: a real API
 * server with the engine's CRDs and the file's namespace, the kind backend on a state folder of its own (its log
 * kept, to look for secrets in it), an engine of provider `providerName` on it, and the ProviderConfig `kind`.
 * `stop()` deletes whatever kind clusters the backend made and a failed test left, then the state folder.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, type CustomObjectsApi } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { clusterTarget } from "../../src/machines/cluster/step.ts";
import { createBackend } from "../../src/providers/kind/index.ts";
import { Engine, type EngineOptions } from "../../src/runtime/engine.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aBackendContext } from "./backend-context.ts";
import { aProviderConfig } from "./builders.ts";
import { startApiServerWith } from "./cluster-harness.ts";
import { containerToolchain, run } from "./containers.ts";

/** The kind clusters the kind backend of `stateDirectory` made: it names each one's folder after it. */
export function kindClustersMadeIn(stateDirectory: string): string[] {
  const clusters = join(stateDirectory, "clusters");
  return existsSync(clusters) ? readdirSync(clusters) : [];
}

/** Deletes the kind clusters `names`, quietly (what a failed test left). */
export async function deleteKindClusters(names: Iterable<string>): Promise<void> {
  for (const name of names) {
    await run(containerToolchain().kind, ["delete", "cluster", "--name", name]).catch(() => {});
  }
}

export interface KindEngineWorldOptions {
  readonly namespace: string;
  readonly providerName: string;
  /** The backend's settings beside the toolchain's `kind` and `docker`. */
  readonly settings?: Readonly<Record<string, string>>;
  /** The engine's options beside the API server, provider, backend and log. */
  readonly engine?: Partial<EngineOptions>;
  /** Kind clusters to delete at the end when the backend's state folder names none (e.g. one named by annotation). */
  readonly fallbackNames?: readonly string[];
}

export interface KindEngineWorld {
  readonly controlPlane: ControlPlane;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly backend: ClusterBackend;
  readonly engine: Engine;
  readonly stateDirectory: string;
  /** The backend's and the engine's log lines. */
  readonly logLines: string[];
  /** The target the engine hands the backend for `cluster` (of the ProviderConfig `kind`), to ask the backend directly. */
  targetOf(cluster: Cluster): ClusterTarget;
  stop(): Promise<void>;
}

export async function startKindEngineWorld(options: KindEngineWorldOptions): Promise<KindEngineWorld> {
  const tools = containerToolchain();
  const stateDirectory = mkdtempSync(join(tmpdir(), `${options.providerName}-`));
  const logLines: string[] = [];
  const { controlPlane, custom } = await startApiServerWith(options.namespace);
  let engine: Engine | undefined;
  const stop = async () => {
    await engine?.stop();
    await controlPlane.stop();
    const left = kindClustersMadeIn(stateDirectory);
    await deleteKindClusters(left.length > 0 ? left : (options.fallbackNames ?? []));
    rmSync(stateDirectory, { recursive: true, force: true });
  };
  try {
    const backend = await createBackend(
      aBackendContext(
        stateDirectory,
        { kind: tools.kind, docker: tools.docker, ...options.settings },
        { log: createLogger({ write: (line) => logLines.push(line) }) },
      ),
    );
    engine = new Engine({
      kubeConfig: controlPlane.kubeConfig,
      providerName: options.providerName,
      environment: "test",
      backend,
      log: createLogger({ level: "debug", write: (line) => logLines.push(line) }),
      ...options.engine,
    });
    await engine.start();
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "kind", backend: "kind", providerRef: { name: options.providerName } }),
    });
    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    const targetOf = (cluster: Cluster) => ({ ...clusterTarget(cluster, undefined), providerConfig: "kind" });
    return { controlPlane, custom, core, backend, engine, stateDirectory, logLines, targetOf, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
