/**
 * Local backends in tests: their state folders, and removing them after a test (a local backend's clusters are
 * control plane processes, stopped first).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { stopPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { createBackend } from "../../src/providers/local.ts";
import { aBackendContext } from "./backend-context.ts";
import { aProviderConfig } from "./builders.ts";
import { profileOffered } from "./profile-offered.ts";
import type { World } from "./world.ts";

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
  /** Closes every backend opened and removes every folder made, whatever failed: for the file's afterAll. */
  close(): Promise<void>;
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
    async close() {
      for (const backend of opened) await backend.close?.().catch(() => {});
      for (const folder of folders) await removeLocalBackendState(folder);
    },
  };
}

/**
 * Offers the local backend on `world` (whose engine runs it): ProviderConfig `local` of backend `local`, and the
 * ClusterProfile the engine makes of it waited for; resolves to the profile's name (`test.<provider>.local`).
 */
export async function offerLocalProfile(world: Pick<World, "custom" | "provider">): Promise<string> {
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "local", backend: "local", providerRef: { name: world.provider } }),
  });
  const profile = `test.${world.provider}.local`;
  await profileOffered(world.custom, profile);
  return profile;
}
