/** Removing a local backend's state folder after a test: its clusters are control plane processes, stopped first. */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { stopPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";

/** Stops every cluster the local backend keeps under `state` (a stop that fails is passed over), then removes `state`. */
export async function removeLocalBackendState(state: string): Promise<void> {
  const clusters = join(state, "clusters");
  for (const name of existsSync(clusters) ? readdirSync(clusters) : []) {
    await stopPersistentControlPlane(join(clusters, name), { remove: true }).catch(() => {});
  }
  rmSync(state, { recursive: true, force: true });
}
