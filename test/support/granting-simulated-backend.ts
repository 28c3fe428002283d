/**
 * The simulated backend whose clusters grant access: every one hands out the admin kubeconfig of one real host
 * API server, so token AccessRequests on simulated Clusters get real ServiceAccounts and working tokens (a move
 * test needs many clusters and live tokens, not many API servers).
 */
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { AdminAccess, ClusterBackend } from "../../src/api/backend-contract.ts";
import { SimulatedBackend, type SimulatedBackendOptions } from "../../src/providers/simulated.ts";
import { delegatingBackend } from "./delegating-backend.ts";

/** A {@link SimulatedBackend} whose every ready cluster is administered through `hostKubeconfig`. */
export function grantingSimulatedBackend(
  hostKubeconfig: string,
  options: SimulatedBackendOptions = {},
): ClusterBackend {
  const inner = new SimulatedBackend(options);
  return {
    ...delegatingBackend(inner, inner.name, { adminAccess: true, oidc: false }),
    exportCluster: (target) => inner.exportCluster(target),
    importCluster: (target, state) => inner.importCluster(target, state),
    async adminAccess(target: ClusterTarget): Promise<AdminAccess | undefined> {
      const observed = await inner.observe(target);
      return observed.exists && observed.phase === "ready" ? { kubeconfig: hostKubeconfig } : undefined;
    },
  };
}
