/** What every backend whose clusters are remote objects (gardener's Shoots, capi's CAPI Clusters) is built with. */
import type { SecretReader } from "../../api/backend-contract.ts";
import type { Clock } from "../../api/clock.ts";
import type { Logger } from "../../api/logger.ts";

/** Knobs every remote-object backend has. */
export interface RemoteBackendOptions {
  /** Reads the kubeconfig Secrets ProviderConfigs name (`settings.kubeconfigSecretRef`) for the remote API. */
  readonly readSecret: SecretReader;
  /** JSON file recording which remote object each Cluster has (so deletion works when its ProviderConfig is gone). */
  readonly stateFile: string;
  readonly clock?: Clock;
  readonly log?: Logger;
}
