/**
 * The move of Clusters, their ProviderConfigs, ClusterRequests, grants and AccessRequests (with their Secrets)
 * between management clusters, with status, as Cluster API's `clusterctl move` does: pause on the source,
 * copy, resume on the target, remove from the source. What to copy and how is decided in machines/move/plan.ts;
 * this file reads and writes (`openmcp-engine move` and `landscape up` call it).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { CLUSTER_ANNOTATIONS, CLUSTER_LABELS } from "../../api/constants/cluster.ts";
import { RESOURCES } from "../../api/constants.ts";
import { HANDOVER_OWNER_LABEL, PAUSED_ANNOTATION } from "../../api/move.ts";
import { objectKey } from "../../api/object-key.ts";
import {
  configsToRemove,
  copyDecision,
  copyOf,
  type Handover,
  handoverOf,
  handoverTaken,
  MOVED_KINDS,
  type MovedKind,
  type MovedObject,
  type MoveSelection,
  type ObjectsByKind,
  type SourceObjects,
  selectObjects,
  statusOf,
} from "../../machines/move/plan.ts";
import { type Side, sides } from "./management-cluster.ts";

/** The points a move passes, in order; `checkpoint` is told each (tests interrupt a move there). */
export type MovePoint =
  | `paused ${string}`
  | "handed over"
  | `copied ${string}`
  | `completed ${string}`
  | "profiles ready"
  | `resumed ${string}`
  | `removed ${string}`;

/** What {@link moveObjects} needs. */
export interface MoveOptions {
  readonly from: KubeConfig;
  readonly to: KubeConfig;
  /** Only these namespaces (empty: all). */
  readonly namespaces: readonly string[];
  /** How long to wait for hand-overs and profiles. Default 120 s. */
  readonly timeoutMs?: number;
  /** Progress, one line at a time. */
  readonly log?: (line: string) => void;
  /** Told at every point of the move, before it goes on (a test throws here to interrupt it, or waits there). */
  readonly checkpoint?: (point: MovePoint) => void | Promise<void>;
}

/** What a move did. */
export interface MoveReport {
  /** Objects moved, by kind (found on the source at the start of this run). */
  readonly moved: Readonly<Record<string, number>>;
  /** Clusters left on the source, with why. */
  readonly refused: MoveSelection["refused"];
}

/**
 * The move itself.
 *
 * Flow: pause → wait for every Cluster's hand-over (refused ones and what uses them are resumed on the source
 * and left) → copy in kind order, creating what is missing (each new uid noted), then write every copy still
 * paused on the target again with all uids known, and its status → wait for the target's ClusterProfiles →
 * resume on the target → remove from the source (users first, Secrets after their owners), finalizers first.
 * Guarantees: idempotent; after a failure at any point, running it again converges (a copy the target's engine
 * has taken on is never overwritten; an object gone from the source is not looked for).
 */
export async function moveObjects(options: MoveOptions): Promise<MoveReport> {
  const run: MoveRun = {
    source: sides(options.from),
    target: sides(options.to),
    namespaces: options.namespaces,
    timeoutMs: options.timeoutMs ?? 120_000,
    log: options.log ?? (() => {}),
    checkpoint: options.checkpoint ?? (() => {}),
  };
  const chosen = selectObjects(await readSource(run.source, run.namespaces), run.namespaces);
  await pauseOnSource(run, chosen);
  const refused = await handOver(run, chosen);
  // What the source holds now, hand-over Secrets included.
  const selection = selectObjects(await readSource(run.source, run.namespaces), run.namespaces, refused);
  const uids = await copyToTarget(run, selection);
  // The target's engine offers the Clusters' profiles (else it would call them missing on resume).
  await waitForProfiles(run.target, selection.objects.Cluster ?? [], run.timeoutMs);
  await run.checkpoint("profiles ready");
  await resumeOnTarget(run, selection);
  await removeFromSource(run, selection, uids);
  const moved = Object.fromEntries(
    MOVED_KINDS.map((kind) => [kind.kind, (selection.objects[kind.kind] ?? []).length]),
  );
  return { moved, refused: selection.refused };
}

/** The two management clusters of one move, and the options every phase uses. */
interface MoveRun {
  readonly source: Side;
  readonly target: Side;
  readonly namespaces: readonly string[];
  readonly timeoutMs: number;
  readonly log: (line: string) => void;
  readonly checkpoint: (point: MovePoint) => void | Promise<void>;
}

/** 1. Pauses the chosen objects on the source. */
async function pauseOnSource({ source, log, checkpoint }: MoveRun, selection: MoveSelection) {
  for (const kind of MOVED_KINDS.filter((entry) => entry.pausable)) {
    await eachOf(selection.objects[kind.kind] ?? [], async (object) => {
      if (object.metadata.annotations?.[PAUSED_ANNOTATION] === "true") return;
      await source.of(kind).merge(object, { metadata: { annotations: { [PAUSED_ANNOTATION]: "true" } } });
      await checkpoint(`paused ${kind.kind} ${objectKey(object)}`);
    });
  }
  log(`paused ${count(selection, (kind) => kind.pausable)} objects on the source`);
}

/**
 * 2. Waits for every Cluster's backend state to be handed over (or refused); the refused Clusters, with why.
 * Those and what uses them are resumed on the source: they stay there.
 */
async function handOver(run: MoveRun, selection: MoveSelection): Promise<Map<string, string>> {
  const { source, namespaces, log } = run;
  const refused = await waitForHandovers(source, namespaces, selection, run.timeoutMs);
  log(
    `${(selection.objects.Cluster ?? []).length - refused.size} Clusters handed over, ${refused.size} refused`,
  );
  await run.checkpoint("handed over");
  if (refused.size === 0) return refused;
  const staying = selectObjects(await readSource(source, namespaces), namespaces);
  const moving = new Set(
    Object.values(selectObjects(await readSource(source, namespaces), namespaces, refused).objects)
      .flat()
      .map((object) => object.metadata.uid),
  );
  for (const kind of MOVED_KINDS.filter((entry) => entry.pausable)) {
    await eachOf(staying.objects[kind.kind] ?? [], async (object) => {
      if (moving.has(object.metadata.uid)) return;
      await source.of(kind).merge(object, { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
    });
  }
  for (const [cluster, reason] of refused) log(`Cluster ${cluster} stays on the source: ${reason}`);
  return refused;
}

/**
 * 3. Copies: what is missing first (owners before what they own), then every copy still paused, with its status;
 * as clusterctl move, into the same namespaces, made where the target lacks them. The target's uid of each
 * source uid.
 */
async function copyToTarget(run: MoveRun, selection: MoveSelection): Promise<Map<string, string>> {
  await run.target.ensureNamespaces(
    new Set(
      Object.values(selection.objects)
        .flat()
        .flatMap((object) => (object.metadata.namespace ? [object.metadata.namespace] : [])),
    ),
  );
  const uids = await createMissing(run, selection);
  await completeCopies(run, selection, uids);
  run.log(`copied ${count(selection, () => true)} objects to the target`);
  return uids;
}

/** Creates on the target what it lacks, a hand-over Secret only while its Cluster's copy has not taken it on. */
async function createMissing({ target, checkpoint }: MoveRun, selection: MoveSelection) {
  const uids = new Map<string, string>();
  /** The copies on the target, by source uid. */
  const copies = new Map<string, MovedObject>();
  for (const kind of MOVED_KINDS) {
    await eachOf(selection.objects[kind.kind] ?? [], async (object) => {
      const existing = await target.of(kind).get(object);
      if (
        !existing &&
        handoverTaken(object, copies.get(object.metadata.labels?.[HANDOVER_OWNER_LABEL] ?? ""))
      )
        return;
      const copy = existing ?? (await target.of(kind).create(copyOf(object, kind, uids)));
      uids.set(object.metadata.uid ?? "", copy.metadata.uid ?? "");
      copies.set(object.metadata.uid ?? "", copy);
      await checkpoint(`copied ${kind.kind} ${objectKey(object)}`);
    });
  }
  return uids;
}

/** Writes every copy still to be completed again, with all uids known, and its status. */
async function completeCopies(
  { target, checkpoint }: MoveRun,
  selection: MoveSelection,
  uids: ReadonlyMap<string, string>,
) {
  for (const kind of MOVED_KINDS) {
    await eachOf(selection.objects[kind.kind] ?? [], async (object) => {
      const existing = await target.of(kind).get(object);
      if (copyDecision(kind, existing) !== "update" || !existing) return;
      const copy = copyOf(object, kind, uids);
      const written = await target.of(kind).replace({
        ...copy,
        metadata: { ...copy.metadata, resourceVersion: existing.metadata.resourceVersion },
      });
      const status = statusOf(object, kind, uids);
      if (status !== undefined) await target.of(kind).replaceStatus({ ...written, status });
      await checkpoint(`completed ${kind.kind} ${objectKey(object)}`);
    });
  }
}

/** 5. Resumes the copies on the target. */
async function resumeOnTarget({ target, log, checkpoint }: MoveRun, selection: MoveSelection) {
  for (const kind of MOVED_KINDS.filter((entry) => entry.pausable)) {
    await eachOf(selection.objects[kind.kind] ?? [], async (object) => {
      const existing = await target.of(kind).get(object);
      if (existing?.metadata.annotations?.[PAUSED_ANNOTATION] !== "true") return;
      await target.of(kind).merge(existing, { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
      await checkpoint(`resumed ${kind.kind} ${objectKey(object)}`);
    });
  }
  log("resumed on the target");
}

/**
 * 6. Removes from the source: finalizers first, so the source's engine does nothing at the backend; a
 * ProviderConfig only when no Cluster left there uses it.
 */
async function removeFromSource(
  { source, log, checkpoint }: MoveRun,
  selection: MoveSelection,
  uids: ReadonlyMap<string, string>,
) {
  const left = await readSource(source, []);
  const removed: ObjectsByKind = {
    ...selection.objects,
    ProviderConfig: configsToRemove(
      selection.objects.ProviderConfig ?? [],
      (left.objects.Cluster ?? []).filter((cluster) => !uids.has(cluster.metadata.uid ?? "")),
      left.profileConfigs,
    ),
  };
  for (const kind of REMOVAL_ORDER) {
    await eachOf(removed[kind.kind] ?? [], async (object) => {
      // A protected Cluster (a landscape's platform) leaves the source with the confirmation its deletion needs;
      // its copy on the target stays protected.
      const confirm =
        kind.kind === "Cluster" && object.metadata.labels?.[CLUSTER_LABELS.deletionProtection] === "true"
          ? { annotations: { [CLUSTER_ANNOTATIONS.confirmDeletion]: "true" } }
          : {};
      const finalizers =
        kind.pausable && (object.metadata.finalizers ?? []).length > 0 ? { finalizers: null } : {};
      if (Object.keys({ ...confirm, ...finalizers }).length > 0) {
        await source.of(kind).merge(object, { metadata: { ...finalizers, ...confirm } });
      }
      await source.of(kind).remove(object);
      await checkpoint(`removed ${kind.kind} ${objectKey(object)}`);
    });
  }
  log("removed from the source");
}

/** Objects of one kind written at once; different kinds go one after the other (owners first). */
const CONCURRENCY = 8;

/**
 * Runs `work` on every item, {@link CONCURRENCY} at a time. After a failure no further item starts; the ones
 * under way finish, then the first failure is thrown (a run stopped half-way is simply run again).
 */
async function eachOf<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  const failures: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (failures.length === 0 && next < items.length) {
      const item = items[next++] as T;
      await work(item).catch((error: unknown) => void failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
}

function count(selection: MoveSelection, which: (kind: MovedKind) => boolean): number {
  return MOVED_KINDS.filter(which).reduce(
    (sum, kind) => sum + (selection.objects[kind.kind] ?? []).length,
    0,
  );
}

/** Reads what a move chooses from on the source. */
async function readSource(source: Side, namespaces: readonly string[]): Promise<SourceObjects> {
  const objects: Record<string, MovedObject[]> = {};
  for (const kind of MOVED_KINDS) objects[kind.kind] = await source.of(kind).list(namespaces);
  const profiles = await source.custom.listClusterCustomObject({ ...RESOURCES.ClusterProfile });
  const profileConfigs = Object.fromEntries(
    ((profiles as { items: MovedObject[] }).items ?? []).map((profile) => [
      profile.metadata.name ?? "",
      (profile.spec as { providerConfigRef?: { name?: string } })?.providerConfigRef?.name ?? "",
    ]),
  );
  return { objects, profileConfigs };
}

/** Waits until every selected Cluster's hand-over is ready or refused; the refused ones, with why. */
async function waitForHandovers(
  source: Side,
  namespaces: readonly string[],
  selection: MoveSelection,
  timeoutMs: number,
): Promise<Map<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const secrets = await source.of(SECRETS).list(namespaces);
    const clusters = (await source.of(CLUSTERS).list(namespaces)).filter((cluster) =>
      (selection.objects.Cluster ?? []).some((chosen) => chosen.metadata.uid === cluster.metadata.uid),
    );
    const states = clusters.map((cluster) => [objectKey(cluster), handoverOf(cluster, secrets)] as const);
    const waiting = states.filter(([, handover]) => handover.state === "waiting").map(([key]) => key);
    if (waiting.length === 0) {
      return new Map(
        states.flatMap(([key, handover]: readonly [string, Handover]) =>
          handover.state === "refused" ? [[key, handover.reason]] : [],
        ),
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `no engine handed over the backend state of Cluster ${waiting.slice(0, 5).join(", ")}${waiting.length > 5 ? ` and ${waiting.length - 5} more` : ""} within ${Math.round(timeoutMs / 1_000)} s: is an engine of their provider running on the source? Run move again once it is`,
      );
    }
    await sleep(250);
  }
}

/** Waits until the target offers the profile every moved Cluster names. */
async function waitForProfiles(
  target: Side,
  clusters: readonly MovedObject[],
  timeoutMs: number,
): Promise<void> {
  const wanted = new Set(clusters.map((cluster) => (cluster.spec as { profile?: string })?.profile ?? ""));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const profiles = (await target.custom.listClusterCustomObject({ ...RESOURCES.ClusterProfile })) as {
      items: MovedObject[];
    };
    const offered = new Set(profiles.items.map((profile) => profile.metadata.name));
    const missing = [...wanted].filter((name) => !offered.has(name));
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the target offers no ClusterProfile ${missing.join(", ")} within ${Math.round(timeoutMs / 1_000)} s: is an engine of the same provider name and environment running there? Run move again once it is`,
      );
    }
    await sleep(250);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Users before what they use; Secrets after their owners (an engine could write a Cluster's hand-over again
 * while the Cluster is there); ProviderConfigs last.
 */
const REMOVAL_ORDER = [
  "AccessRequest",
  "ClusterRequestGrant",
  "ClusterRequest",
  "Cluster",
  "Secret",
  "ProviderConfig",
].map((name) => MOVED_KINDS.find((kind) => kind.kind === name) as MovedKind);

const CLUSTERS = MOVED_KINDS.find((kind) => kind.kind === "Cluster") as MovedKind;
const SECRETS = MOVED_KINDS.find((kind) => kind.kind === "Secret") as MovedKind;
