/**
 * The ClusterRequest kind's I/O half: the scheduler's view gathered from the caches (and this engine's
 * own writes the caches do not show yet), its commands carried out by the scheduler writes.
 */

import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { ClusterRequest } from "../../../api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../../api/cluster-request-grant.ts";
import {
  CLUSTER_REQUEST_CONDITION_TYPES,
  CLUSTER_REQUEST_REASONS,
} from "../../../api/constants/cluster-request.ts";
import { ANNOTATIONS, REQUEST_PHASES } from "../../../api/constants.ts";
import { objectKey, referenceKey } from "../../../api/object-key.ts";
import type { Purpose, PurposeSpec } from "../../../api/purpose.ts";
import { servedRequests } from "../../../machines/cluster-request/cluster-claims.ts";
import { CLUSTER_REQUEST_DEFINITION } from "../../../machines/cluster-request/definition.ts";
import { explainClusterRequest } from "../../../machines/cluster-request/explain.ts";
import type { SchedulingView } from "../../../machines/cluster-request/schedule.ts";
import {
  type ClusterRequestCommand,
  type ClusterRequestTiming,
  clusterRequestResponsibility,
  stepClusterRequest,
} from "../../../machines/cluster-request/step.ts";
import { KeyedLock } from "../../../util/keyed-lock.ts";
import { RecentWrites } from "../../controllers/recent-writes.ts";
import type { KindContext, KindSettings, MachineKind } from "../../machine-kind.ts";
import { wake } from "../../machine-kind.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { CLUSTER_REQUEST_CACHES } from "./caches.ts";
import type { SchedulerConfigView } from "./scheduler-config-source.ts";
import { assign, letGo, release, type SchedulerWriter } from "./scheduler-writes.ts";

/** Defaults: look again every 2 s while working, every 60 s while Denied, every 10 min when Granted. */
export const DEFAULT_CLUSTER_REQUEST_TIMING = { pollMs: 2_000, retryMs: 60_000, resyncMs: 600_000 } as const;

/** What the scheduler keeps per engine: its writer (with memory of its recent writes) and its configuration. */
interface SchedulerState {
  readonly writer: SchedulerWriter;
  readonly config: SchedulerConfigView;
}

/** The ClusterRequest kind's settings: off beside another scheduler, and the configuration in force. */
export interface ClusterRequestSettings extends KindSettings {
  readonly enabled?: boolean;
  readonly schedulerConfig?: SchedulerConfigView;
}

/** The context of the ClusterRequest kind. */
type SchedulerContext = KindContext<ClusterRequestTiming, SchedulerState>;

/** The scheduler's configuration when none is given: there is none, and it never changes. */
const NO_SCHEDULER_CONFIG: SchedulerConfigView = { current: () => undefined, onChange: () => {} };

/** Reasons of requests that wait for a change of Clusters: a name held by another, a Cluster being deleted. */
const WAITING_FOR_CLUSTERS: ReadonlySet<string> = new Set([
  CLUSTER_REQUEST_REASONS.ClusterConflict,
  CLUSTER_REQUEST_REASONS.WaitingForCluster,
  CLUSTER_REQUEST_REASONS.Replacing,
]);

/** Requests that wait for some Cluster to change (not those merely queued: their own events queued them). */
function waitingForClusters(context: KindContext): string[] {
  return context.informers
    .of(CLUSTER_REQUEST_CACHES.clusterRequests)
    .list()
    .filter((request) => {
      const reason = request.status?.conditions?.find(
        (c) => c.type === CLUSTER_REQUEST_CONDITION_TYPES.clusterGranted,
      )?.reason;
      return reason !== undefined && WAITING_FOR_CLUSTERS.has(reason);
    })
    .map(objectKey);
}

/** Requests whose scheduling may change with the world: every one not Granted. */
function unsettled(context: KindContext): string[] {
  return context.informers
    .of(CLUSTER_REQUEST_CACHES.clusterRequests)
    .list()
    .filter(
      (request) => request.status?.phase !== REQUEST_PHASES.granted || request.metadata.deletionTimestamp,
    )
    .map(objectKey);
}

/** The offered traits of a profile, from its `engine.openmcp.cloud/traits` annotation. */
function traitsOf(profile: ClusterProfile): string[] {
  return (profile.metadata.annotations?.[ANNOTATIONS.traits] ?? "")
    .split(",")
    .map((trait) => trait.trim())
    .filter((trait) => trait !== "");
}

/** What the scheduler sees, from the caches with this engine's recent writes laid over them. */
function viewOf(request: ClusterRequest, context: SchedulerContext): SchedulingView {
  const { informers } = context;
  const { writer, config } = context.state;
  const purposes = new Map<string, PurposeSpec>(
    informers
      .of(CLUSTER_REQUEST_CACHES.purposes)
      .list()
      .map((purpose: Purpose) => [purpose.metadata.name ?? "", purpose.spec]),
  );
  const profileTraits = new Map(
    informers
      .of(PROFILE_CACHES.profiles)
      .list()
      .map((profile) => [profile.metadata.name ?? "", traitsOf(profile)]),
  );
  const liveRequests = new Set(
    informers
      .of(CLUSTER_REQUEST_CACHES.clusterRequests)
      .list()
      .filter((other) => !other.metadata.deletionTimestamp)
      .map((other) => other.metadata.uid ?? ""),
  );
  return {
    config: config.current(),
    purposes,
    profileTraits,
    clusters: writer.clusters.overlay(informers.of(CLUSTER_CACHES.clusters).list(), objectKey),
    liveRequests,
    grant: ownGrantOf(request, context),
  };
}

/** The request's grant as this engine knows it (its own last write, else the cache), if it is this very request's. */
function ownGrantOf(request: ClusterRequest, context: SchedulerContext): ClusterRequestGrant | undefined {
  const key = objectKey(request);
  const grant = context.state.writer.grants.get(
    key,
    context.informers.of(CLUSTER_REQUEST_CACHES.grants).get(key),
  );
  return grant?.spec.requestUID === request.metadata.uid ? grant : undefined;
}

/**
 * What the scheduler does, in a line for the log and /readyz: without a configuration it leaves every
 * ClusterRequest to another scheduler (beside the openMCP operator, whose scheduler serves them).
 */
export function schedulerStatus(scheduler: SchedulerConfigView): string {
  return scheduler.current()
    ? "scheduler: on; ClusterRequests granted by another scheduler are left as they are"
    : "scheduler: no configuration (--scheduler-config or --scheduler-config-map); ClusterRequests are left to another scheduler, e.g. the openMCP operator's";
}

/**
 * The ClusterRequest kind: the scheduler. Guarantees: never more requests on a Cluster than its
 * tenancyCount, never two colliding prefixes on one Cluster (both re-checked on the Cluster as just
 * read, written guarded by its resourceVersion); an Exclusive Cluster's name is a digest of its request,
 * so a restart or a lost status finds the same Cluster instead of making a second.
 */
export const clusterRequestKind: MachineKind<
  ClusterRequest,
  SchedulingView,
  ClusterRequestCommand,
  ClusterRequestTiming,
  SchedulerState,
  ClusterRequestSettings
> = {
  definition: CLUSTER_REQUEST_DEFINITION,
  cache: CLUSTER_REQUEST_CACHES.clusterRequests,
  timing: DEFAULT_CLUSTER_REQUEST_TIMING,
  // Off (`schedule: false`) beside another scheduler, the openMCP operator's, which serves requests then.
  enabled: (settings) => settings.enabled !== false,
  state: (context, settings) => ({
    writer: {
      kubeConfig: context.kubeConfig,
      clusters: new RecentWrites<Cluster>(context.clock),
      grants: new RecentWrites<ClusterRequestGrant>(context.clock),
      cachedCluster: (key) => context.informers.of(CLUSTER_CACHES.clusters).get(key),
      clusterLocks: new KeyedLock(),
    },
    config: settings.schedulerConfig ?? NO_SCHEDULER_CONFIG,
  }),
  // An invalid configuration stops the engine's start, with every problem named.
  start: async ({ state }) => {
    await state.config.start?.();
  },
  stop: ({ state }) => state.config.stop?.(),
  readiness: (settings, context) =>
    context
      ? [schedulerStatus(context.state.config)]
      : settings.enabled === false
        ? ["scheduler: off (--no-schedule); ClusterRequests are left to another scheduler"]
        : [],
  wakes: [
    // A Cluster's change matters to the requests it serves and to those waiting for a Cluster to change.
    wake(CLUSTER_CACHES.clusters, (cluster: Cluster, context) => {
      const uids = new Set(servedRequests(cluster));
      const served = context.informers
        .of(CLUSTER_REQUEST_CACHES.clusterRequests)
        .list()
        .filter(
          (request) =>
            uids.has(request.metadata.uid ?? "") ||
            (request.status?.cluster?.name === cluster.metadata.name &&
              request.status?.cluster?.namespace === cluster.metadata.namespace),
        )
        .map(objectKey);
      return [...served, ...waitingForClusters(context)];
    }),
    wake(CLUSTER_REQUEST_CACHES.grants, (grant: ClusterRequestGrant) => [objectKey(grant)]),
    wake(CLUSTER_REQUEST_CACHES.purposes, (_: Purpose, context) => unsettled(context)),
    wake(PROFILE_CACHES.profiles, (_: ClusterProfile, context) => unsettled(context)),
  ],

  // Requests of one purpose may be serialized (below), so one replica owns them all; spec never changes.
  shardKey: (request) => `purpose:${request.spec.purpose}`,

  // Requests of a purpose with a limited tenancyCount decide one after the other: two deciding at once
  // would each see no Cluster with room and both make one. (Exclusive ones never share; an unlimited
  // purpose has one Cluster, whose name makes a second create fail.)
  serialize(request, context) {
    const mapping = context.state.config.current()?.purposeMappings[request.spec.purpose];
    const limited = mapping?.template.spec.tenancy === "Shared" && mapping.tenancyCount > 0;
    return limited && request.status?.phase !== REQUEST_PHASES.granted
      ? `purpose:${request.spec.purpose}`
      : undefined;
  },

  watch(context, wakeKey) {
    const { config } = context.state;
    if (!config.current()) context.log.info(schedulerStatus(config));
    // A new configuration may serve requests the old one could not (and changes which are selected).
    config.onChange(() => {
      for (const request of context.informers.of(CLUSTER_REQUEST_CACHES.clusterRequests).list())
        wakeKey(objectKey(request));
    });
  },

  async open(request, context) {
    const { writer, config } = context.state;
    const hasOwnGrant = ownGrantOf(request, context) !== undefined;
    const responsibility = clusterRequestResponsibility(request, config.current(), hasOwnGrant);
    if (responsibility !== "ours") {
      context.log.debug("ClusterRequest left alone", { request: objectKey(request), why: responsibility });
      return undefined;
    }
    const { log, timing } = context;
    return {
      observe: async (object) => viewOf(object, context),
      step: (object, view, { now, lastError }) =>
        stepClusterRequest({
          request: object,
          view,
          ...(lastError === undefined ? {} : { lastError }),
          now,
          timing,
        }),
      async run(commands, object) {
        for (const command of commands) {
          log.info("scheduler command", { command: describeCommand(command), request: objectKey(object) });
          // A Cluster it makes continues the request's trace (when traces are exported).
          if (command.kind === "assign")
            await assign(writer, object, command.placement, context.tracing?.traceparentOf(object));
          else if (command.kind === "letGo") await letGo(writer, command.cluster, object.metadata.uid ?? "");
          else await release(writer, object, command.clusters);
        }
      },
    };
  },

  describe: describeCommand,

  explain: async (request) => explainClusterRequest(request),
};

function describeCommand(command: ClusterRequestCommand): string {
  if (command.kind === "assign") {
    const { cluster, created } = command.placement;
    const name = cluster.metadata.name ?? `${cluster.metadata.generateName}…`;
    return `${created ? "create" : "claim"} Cluster ${cluster.metadata.namespace}/${name}`;
  }
  if (command.kind === "letGo") return `let go of Cluster ${referenceKey(command.cluster)}`;
  return `release ${command.clusters.map((ref) => referenceKey(ref)).join(", ") || "nothing"}`;
}
