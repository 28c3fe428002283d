/** The EndpointExport kind for the engine: its cache, what wakes it, how facts are gathered and commands run. */
import { CoreV1Api } from "@kubernetes/client-node";
import type { Cluster } from "../../../src/api/cluster.ts";
import { CLUSTER_PHASES } from "../../../src/api/constants.ts";
import { isConflict, isNotFound } from "../../../src/api/error-message.ts";
import { objectKey } from "../../../src/api/object-key.ts";
import type { MachineDefinition } from "../../../src/machines/shared/machine-definition.ts";
import type { RequeueTiming } from "../../../src/machines/shared/machine-tags.ts";
import type { CacheSpec } from "../../../src/runtime/informers.ts";
import { CLUSTER_CACHES } from "../../../src/runtime/kinds/cluster/caches.ts";
import { type MachineKind, wake } from "../../../src/runtime/machine-kind.ts";
import { endpointExportMachine } from "./machine.ts";
import { EXPORT_FINALIZER, type ExportCommand, stepEndpointExport } from "./step.ts";
import { configMapNameOf, type EndpointExport } from "./types.ts";

/** Where exports live: the group and version of crd.yaml. */
const RESOURCE = {
  group: "examples.engine.openmcp.cloud",
  version: "v1alpha1",
  plural: "endpointexports",
  namespaced: true,
};

/** The pure half: what the statechart export, `explain` and the live view need. */
export const ENDPOINT_EXPORT_DEFINITION: MachineDefinition = {
  kind: "EndpointExport",
  apiVersion: `${RESOURCE.group}/${RESOURCE.version}`,
  resource: RESOURCE,
  names: ["endpointexport", "endpointexports"],
  machine: endpointExportMachine,
  statechart: { file: "endpointExport", source: "docs/examples/endpoint-export/machine.ts" },
  guardPhrases: {
    isBeingDeleted: "the export is being deleted",
    clusterReady: "the Cluster is Ready with an endpoint",
    isPublished: "the ConfigMap holds the endpoint",
    isStale: "the ConfigMap is missing or holds another endpoint",
    withoutOurFinalizer: "our finalizer is gone",
    configMapGone: "the ConfigMap is gone",
  },
};

/** The cache of exports. */
const EXPORTS: CacheSpec<EndpointExport> = {
  name: "EndpointExport",
  kind: "EndpointExport",
  resource: RESOURCE,
};

/** What one look reads: the Cluster's endpoint (cache) and the ConfigMap's (API server). */
interface ExportObservation {
  readonly endpoint: string | undefined;
  readonly configMap: { readonly endpoint: string | undefined } | undefined;
}

/** Its own timing: poll a publishing export every second, look at a published one every 5 minutes. */
export const DEFAULT_EXPORT_TIMING: RequeueTiming = { pollMs: 1_000, retryMs: 10_000, resyncMs: 300_000 };

/**
 * The EndpointExport kind: one entry in the engine's kinds. Configured through the engine's
 * `kindSettings.EndpointExport`: `timing` overrides its own, `enabled: false` turns it off.
 */
export const endpointExportKind: MachineKind<EndpointExport, ExportObservation, ExportCommand> = {
  definition: ENDPOINT_EXPORT_DEFINITION,
  cache: EXPORTS,
  timing: DEFAULT_EXPORT_TIMING,
  enabled: (settings) => settings.enabled !== false,
  // A Cluster that becomes Ready (or changes its endpoint) wakes the exports that name it.
  wakes: [
    wake(CLUSTER_CACHES.clusters, (cluster: Cluster, context) =>
      context.informers
        .of(EXPORTS)
        .list()
        .filter(
          (e) =>
            e.metadata.namespace === cluster.metadata.namespace &&
            e.spec.clusterRef.name === cluster.metadata.name,
        )
        .map(objectKey),
    ),
  ],

  async open(object, context) {
    const core = context.kubeConfig.makeApiClient(CoreV1Api);
    const namespace = object.metadata.namespace ?? "";
    const name = configMapNameOf(object);
    return {
      async observe() {
        const cluster = context.informers
          .of(CLUSTER_CACHES.clusters)
          .get(`${namespace}/${object.spec.clusterRef.name}`);
        const ready = cluster?.status?.phase === CLUSTER_PHASES.ready;
        let configMap: ExportObservation["configMap"];
        try {
          const found = await core.readNamespacedConfigMap({ namespace, name });
          configMap = { endpoint: found.data?.endpoint };
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        return { endpoint: ready ? cluster?.status?.apiServer : undefined, configMap };
      },
      step: (current, observation, { now }) =>
        stepEndpointExport({
          object: current,
          facts: {
            deleting: current.metadata.deletionTimestamp !== undefined,
            hasFinalizer: current.metadata.finalizers?.includes(EXPORT_FINALIZER) ?? false,
            endpoint: observation.endpoint,
            configMapExists: observation.configMap !== undefined,
            published:
              observation.configMap !== undefined && observation.configMap.endpoint === observation.endpoint,
          },
          now,
          timing: context.timing,
        }),
      async run(commands) {
        for (const command of commands) {
          if (command.kind === "deleteConfigMap") {
            try {
              await core.deleteNamespacedConfigMap({ namespace, name });
            } catch (error) {
              if (!isNotFound(error)) throw error;
            }
            continue;
          }
          const body = { metadata: { name, namespace }, data: { endpoint: command.endpoint } };
          try {
            await core.createNamespacedConfigMap({ namespace, body });
          } catch (error) {
            if (!isConflict(error)) throw error;
            await core.replaceNamespacedConfigMap({ namespace, name, body });
          }
        }
      },
    };
  },

  describe: (command) => command.kind,

  explain: async (object) => ({
    state: object.status?.state,
    phase: object.status?.phase,
    why: (object.status?.conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason}): ${c.message}`),
    waitingFor:
      object.status?.phase === "Ready" ? [] : [`Cluster ${object.spec.clusterRef.name} to be Ready`],
  }),
};
