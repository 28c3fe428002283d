/**
 * Local backends in tests: their state folders, and removing them after a test (a local backend's clusters are
 * control plane processes, stopped first).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { stopPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { createBackend } from "../../src/providers/local.ts";
import { aBackendContext } from "./backend-context.ts";
import { aProviderConfig, aTargetFor } from "./builders.ts";
import { PROVIDER } from "./cluster-fixtures.ts";
import { profileOffered } from "./profile-offered.ts";
import { type ExtraEngineOptions, isReady, startWorld, type World } from "./world.ts";

/** Stops every cluster the local backend keeps under `state` (a stop that fails is passed over), then removes `state`. */
export async function removeLocalBackendState(state: string): Promise<void> {
  const clusters = join(state, "clusters");
  for (const name of existsSync(clusters) ? readdirSync(clusters) : []) {
    await stopPersistentControlPlane(join(clusters, name), { remove: true }).catch(() => {});
  }
  rmSync(state, { recursive: true, force: true });
}

/** The local backends of one test file, see {@link localBackends}. */
export interface LocalBackends {
  /** A new, empty folder for a backend's state or the engine's snapshots (named `<prefix>…` in the temporary folder). */
  folder(): string;
  /** A local backend on `state` (another one on the same folder is the backend after a restart). */
  open(state: string, options?: Record<string, string>): Promise<ClusterBackend>;
  /**
   * Closes every backend opened and removes every folder made, whatever failed: for the file's afterAll. A world
   * given (whose engines call these backends) is stopped first; one that never started is passed over.
   */
  close(world?: { stop(): Promise<void> }): Promise<void>;
}

/** Local backends a test file opens, on state folders it makes, all stopped and removed by `close`. */
export function localBackends(prefix: string): LocalBackends {
  const opened: ClusterBackend[] = [];
  const folders: string[] = [];
  return {
    folder() {
      const folder = mkdtempSync(join(tmpdir(), prefix));
      folders.push(folder);
      return folder;
    },
    async open(state, options = {}) {
      const backend = await createBackend(aBackendContext(state, options));
      opened.push(backend);
      return backend;
    },
    async close(world) {
      await world?.stop();
      for (const backend of opened) await backend.close?.().catch(() => {});
      for (const folder of folders) await removeLocalBackendState(folder);
    },
  };
}

/** The ClusterProfile the engine of provider `provider` makes of ProviderConfig `local` ({@link offerLocalProfile}). */
export const localProfileName = (provider: string): string => `test.${provider}.local`;
/** {@link localProfileName} of a world of the default provider. */
export const LOCAL_PROFILE = localProfileName(PROVIDER);

/**
 * Offers the local backend on `world` (whose engine runs it): ProviderConfig `local` of backend `local`, and the
 * ClusterProfile the engine makes of it waited for; resolves to the profile's name (`test.<provider>.local`).
 */
export async function offerLocalProfile(world: Pick<World, "custom" | "provider">): Promise<string> {
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "local", backend: "local", providerRef: { name: world.provider } }),
  });
  const profile = localProfileName(world.provider);
  await profileOffered(world.custom, profile);
  return profile;
}

/**
 * The admin kubeconfig of the world's Cluster `cluster` of profile `profile` (default {@link LOCAL_PROFILE}) on the
 * ProviderConfig `local` (as {@link offerLocalProfile} makes it), as the world's backend issues it.
 */
export async function localAdmin(
  world: Pick<World, "backend">,
  cluster: Cluster,
  profile = LOCAL_PROFILE,
): Promise<KubeConfig> {
  const access = await world.backend.adminAccess(aTargetFor(cluster, { profile, providerConfig: "local" }));
  const admin = new KubeConfig();
  admin.loadFromString(access?.kubeconfig ?? "");
  return admin;
}

/**
 * Makes the world's Clusters `names` of profile `profile` (default {@link LOCAL_PROFILE}; all asked for first, so
 * they are made side by side), waits until each is Ready, and resolves to each one's admin kubeconfig, by name.
 */
export async function readyLocalClusters(
  world: Pick<World, "backend" | "createCluster" | "waitFor">,
  names: readonly string[],
  profile = LOCAL_PROFILE,
): Promise<Map<string, KubeConfig>> {
  for (const name of names) await world.createCluster(name, { profile });
  const admins = new Map<string, KubeConfig>();
  for (const name of names) {
    const cluster = (await world.waitFor(name, isReady, 180_000)) as Cluster;
    admins.set(name, await localAdmin(world, cluster, profile));
  }
  return admins;
}

/**
 * A world whose engine runs a local backend of `locals` on `state` (default: a new folder), with `backend`'s options
 * beside `stopOnClose` (its clusters' processes stop when it closes), and `engine`'s options; offered as profile
 * {@link LOCAL_PROFILE} ({@link offerLocalProfile}).
 */
export async function startLocalWorld(
  locals: LocalBackends,
  {
    state = locals.folder(),
    backend = {},
    engine,
  }: { state?: string; backend?: Record<string, string>; engine?: ExtraEngineOptions } = {},
): Promise<World> {
  const world = await startWorld({
    backend: await locals.open(state, { stopOnClose: "true", ...backend }),
    ...(engine ? { engine } : {}),
  });
  await offerLocalProfile(world);
  return world;
}
