/** Waiting for a Cluster on an API server to be as a test wants it. */
import type { CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type EventuallyOptions, eventually, satisfying } from "./eventually.ts";
import { readCustomObject } from "./maybe-absent.ts";

/**
 * Cluster `namespace/name` of the API server `custom` talks to, once `wanted` holds for it; until then (absent, or
 * not yet as wanted) looked at again. `what` names the wish in the failure message.
 */
export const clusterWhereOn = (
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  what: string,
  wanted: (cluster: Cluster) => boolean,
  timing: Omit<EventuallyOptions, "what"> = {},
): Promise<Cluster> =>
  eventually(
    async () =>
      satisfying(
        await readCustomObject<Cluster>(custom, RESOURCES.Cluster, namespace, name),
        (cluster) => cluster !== undefined && wanted(cluster),
      ),
    { what: `Cluster ${namespace}/${name}: ${what}`, ...timing },
  ) as Promise<Cluster>;
