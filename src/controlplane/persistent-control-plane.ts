/** A control plane that lives in a folder of its own and outlives this process: started, found again and stopped from that folder. */
import { randomUUID } from "node:crypto";
import { readdir, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeConfig } from "@kubernetes/client-node";
import { writeFileAtomically } from "../util/atomic-file.ts";
import { acquireDirectoryLock } from "../util/directory-lock.ts";
import { freePorts } from "../util/free-ports.ts";
import type { ManagedProcess } from "../util/managed-process.ts";
import {
  type GroupLeader,
  isProcessAlive,
  processesMarked,
  stopProcessGroups,
} from "../util/process-groups.ts";
import { type ControlPlaneCertificates, generateLoopbackCertificates } from "./certificates.ts";
import {
  adminKubeConfig,
  kubeconfigYaml,
  readCertificates,
  writeCertificates,
} from "./control-plane-files.ts";
import { type KubeAssets, kubeAssetVersions } from "./kube-assets.ts";
import {
  apiServerReady,
  type ControlPlanePorts,
  launchControllerManager,
  launchControlPlane,
  retryWhenPortTaken,
  startError,
} from "./launch.ts";

/** What is needed to find a persistent control plane's processes again; kept as `record.json` in its folder. */
export interface PersistentControlPlaneRecord {
  /** The folder the processes were started in; their command lines carry it. */
  readonly directory: string;
  /** As the binary reports it, e.g. `v1.36.3`. */
  readonly kubernetesVersion: string;
  readonly ports: ControlPlanePorts;
  /** Leaders of the process groups; each later one is missing until it has been started. */
  readonly pids: { readonly etcd: number; readonly apiServer?: number; readonly controllerManager?: number };
  /** ISO time of the start that spawned them. */
  readonly startedAt: string;
}

/** What {@link inspectPersistentControlPlane} finds. */
export interface PersistentControlPlaneStatus {
  /** Whether the folder exists. */
  readonly exists: boolean;
  /** What the last start recorded; missing before any start spawned a process. */
  readonly record?: PersistentControlPlaneRecord;
  /** Both recorded processes are alive (and are ours, not a reused pid). */
  readonly running: boolean;
  /** Running, and kube-apiserver answers `/readyz` to the admin client. */
  readonly healthy: boolean;
  /** `https://127.0.0.1:<port>` of the last start. */
  readonly server?: string;
}

/** How to start (or find running) the control plane of one folder. */
export interface PersistentControlPlaneProps {
  /** Its folder: certificates, etcd data, logs, `record.json`, `kubeconfig`. Must exist. */
  readonly directory: string;
  readonly assets: KubeAssets;
  /** How long to wait for each process to become healthy. Default 90 s. */
  readonly startTimeoutMs?: number;
  /** Extra kube-apiserver flags, `--name=value`. */
  readonly extraApiServerArgs?: readonly string[];
  /** Gives up (stopping what it started; data stays) when aborted. */
  readonly signal?: AbortSignal;
  readonly log?: (message: string) => void;
}

/** A healthy persistent control plane. Its processes run on until {@link stopPersistentControlPlane}. */
export interface PersistentControlPlane {
  readonly directory: string;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  readonly record: PersistentControlPlaneRecord;
  /** Whether its processes were running already (found again) rather than started by this call. */
  readonly adopted: boolean;
  /** Admin access (`system:masters`); the same as the folder's `kubeconfig` file. */
  readonly kubeConfig: KubeConfig;
}

const recordFile = "record.json";
const removingMark = ".removing-";

/**
 * Makes sure the control plane of `props.directory` runs and is healthy: finds its processes running
 * again (no new ones), or starts them from the folder's data.
 *
 * Flow: takes the folder's lock (waiting for another starter or stopper) → processes recorded and alive:
 * waits until healthy and returns them, first starting the controller-manager if a start cut short left it
 * out ({@link isWhole}) → otherwise stops any survivor, reuses the certificates (generating them on the first
 * start), takes the recorded ports where free (else new ones), starts etcd (durable), kube-apiserver and the
 * controller-manager detached in their own process groups, records them in `record.json` (atomically, after
 * each spawn) and waits until each is healthy.
 *
 * Guarantees: never two sets of processes for one folder; the processes outlive this process (no exit
 * hook, no watchdog); clients keep trusting the server across restarts (same CA); a failed start stops
 * what it started and keeps the data, throwing a `ControlPlaneStartError` with the last log lines.
 * Caveats: the folder must exist (a lock never creates what it protects): a folder removed meanwhile
 * fails with code `ENOENT`. If the API server port changed, service-account tokens issued before no
 * longer verify (the issuer is the server URL).
 */
export async function startPersistentControlPlane(
  props: PersistentControlPlaneProps,
): Promise<PersistentControlPlane> {
  const directory = resolve(props.directory);
  const timeoutMs = props.startTimeoutMs ?? 90_000;
  const release = await acquireDirectoryLock(directory, {
    ...lockTimes(timeoutMs),
    ...(props.signal ? { signal: props.signal } : {}),
  });
  if (!release) throw new Error(`${directory} is locked by another start or stop that does not finish`);
  try {
    const found = await inspectPersistentControlPlane(directory);
    const reused = await readCertificates(directory);
    if (found.running && found.record && reused && (await becomesHealthy(found.record, reused, props))) {
      if (isWhole(found.record, props.assets)) return await described(found.record, reused, true);
      // Cut short after kube-apiserver: finish it. A restart instead would lose each start a crash interrupts again.
      if (found.record.ports.controllerManager !== undefined) {
        return await described(await finishStart(found.record, reused, props), reused, false);
      }
    }
    await stopRecorded(found.record);
    await stopUnrecorded(directory);
    props.signal?.throwIfAborted();

    const certificates = reused ?? (await generateLoopbackCertificates());
    if (!reused) await writeCertificates(directory, certificates);
    const kubernetesVersion = kubeAssetVersions(props.assets).kubernetes;
    const startedAt = new Date().toISOString();
    const previous = found.record?.ports;
    await retryWhenPortTaken(async (attempt) => {
      const preferred =
        attempt === 1 && previous
          ? [previous.etcd, previous.etcdPeer, previous.apiServer, previous.controllerManager]
          : [];
      const [etcd, etcdPeer, apiServer, controllerManager] = (await freePorts(4, "127.0.0.1", preferred)) as [
        number,
        number,
        number,
        number,
      ];
      const ports = { etcd, etcdPeer, apiServer, controllerManager };
      return launchControlPlane({
        assets: props.assets,
        directory,
        ports,
        certificates,
        timeoutMs,
        durable: true,
        ...(props.extraApiServerArgs ? { extraApiServerArgs: props.extraApiServerArgs } : {}),
        ...(props.signal ? { signal: props.signal } : {}),
        ...(props.log ? { log: props.log } : {}),
        onSpawn: ([etcdProcess, apiServerProcess, controllerManagerProcess]) =>
          writeRecord({
            directory,
            kubernetesVersion,
            ports,
            pids: {
              etcd: etcdProcess?.pid ?? -1,
              ...(apiServerProcess ? { apiServer: apiServerProcess.pid } : {}),
              ...(controllerManagerProcess ? { controllerManager: controllerManagerProcess.pid } : {}),
            },
            startedAt,
          }),
      });
    }, props.log);
    const record = await readRecord(directory);
    if (!record) throw new Error(`${join(directory, recordFile)} vanished while starting`);
    return await described(record, certificates, false);
  } finally {
    await release();
  }
}

/** What runs in `directory` right now; only reads (files, `/proc`, one `/readyz` request). */
export async function inspectPersistentControlPlane(folder: string): Promise<PersistentControlPlaneStatus> {
  const directory = resolve(folder);
  let record: PersistentControlPlaneRecord | undefined;
  try {
    record = await readRecord(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { exists: false, running: false, healthy: false };
    throw error;
  }
  if (!record) return { exists: true, running: false, healthy: false };
  const server = serverOf(record);
  const running = leadersOf(record).every(({ pid, marker }) => isProcessAlive(pid, marker));
  const certificates = running ? await readCertificates(directory) : undefined;
  const healthy = certificates !== undefined && (await apiServerReady(server, certificates));
  return { exists: true, record, running, healthy, server };
}

/** Admin access to the control plane of `directory`, from its certificates and record; `undefined` before its first start. */
export async function persistentAdminKubeConfig(folder: string): Promise<KubeConfig | undefined> {
  const directory = resolve(folder);
  const record = await readRecord(directory).catch(() => undefined);
  const certificates = await readCertificates(directory).catch(() => undefined);
  return record && certificates ? adminKubeConfig(serverOf(record), certificates) : undefined;
}

/** Options of {@link stopPersistentControlPlane}. */
export interface StopPersistentProps {
  /** Also remove the folder (data, certificates, logs). Default false: a later start resumes from the data. */
  readonly remove?: boolean;
  /** SIGTERM, then SIGKILL after this long. Default 5 s. */
  readonly graceMs?: number;
  /** The `startTimeoutMs` its starts use, which bounds how long this stop waits for one in progress. Default 90 s. */
  readonly startTimeoutMs?: number;
}

/**
 * Stops the processes of the control plane in `directory` (kube-apiserver first, each group SIGTERM
 * then SIGKILL after the grace period) and, with `remove`, removes the folder. A missing folder is fine.
 *
 * Guarantees: waits for a start in progress (the folder's lock), so nothing it spawns is missed; with
 * `remove`, the folder first moves aside atomically (`.<name>.removing-…` next to it), so nobody finds a
 * half-removed control plane and a start cannot recreate it; {@link removeAbandonedControlPlanes}
 * finishes removals a crash interrupted.
 */
export async function stopPersistentControlPlane(
  folder: string,
  props: StopPersistentProps = {},
): Promise<void> {
  const directory = resolve(folder);
  let release: (() => Promise<void>) | undefined; // undefined: a holder stuck beyond its own timeout; stop anyway
  try {
    release = await acquireDirectoryLock(directory, lockTimes(props.startTimeoutMs ?? 90_000));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // no such control plane
    throw error;
  }
  let aside = directory;
  try {
    if (props.remove) {
      const moved = join(
        dirname(directory),
        `.${basename(directory)}${removingMark}${randomUUID().slice(0, 8)}`,
      );
      try {
        await rename(directory, moved);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // removed meanwhile
        throw error;
      }
      aside = moved;
    }
    await stopRecorded(await readRecord(aside), props.graceMs);
    if (props.remove) await rm(aside, { recursive: true, force: true });
  } finally {
    if (aside === directory) await release?.(); // a moved folder takes its lock along, to be removed
  }
}

/**
 * Whether `record` names every process `assets` start: a start cut short (a kill -9 while kube-apiserver became
 * healthy) leaves etcd and kube-apiserver running without the controller-manager, for the next start to finish.
 */
export function isWhole(record: PersistentControlPlaneRecord, assets: KubeAssets): boolean {
  return assets.kubeControllerManager === undefined || record.pids.controllerManager !== undefined;
}

/** Finishes removals a crash interrupted among the folders in `parent`: stops their processes, removes them. */
export async function removeAbandonedControlPlanes(parent: string): Promise<string[]> {
  const names = await readdir(parent).catch(() => [] as string[]);
  const abandoned = names.filter(isBeingRemoved);
  for (const name of abandoned) {
    const folder = join(parent, name);
    await stopRecorded(await readRecord(folder).catch(() => undefined));
    await rm(folder, { recursive: true, force: true });
  }
  return abandoned;
}

/** Whether `name` (an entry of the parent folder) is a control plane being removed rather than one in use. */
export function isBeingRemoved(name: string): boolean {
  return name.startsWith(".") && name.includes(removingMark);
}

function lockTimes(startTimeoutMs: number) {
  // Long enough for a start that waits twice for health, plus port retries and stopping survivors.
  const ms = 2 * startTimeoutMs + 30_000;
  return { waitMs: ms, staleAfterMs: ms };
}

function serverOf(record: PersistentControlPlaneRecord): string {
  return `https://127.0.0.1:${record.ports.apiServer}`;
}

/** The recorded group leaders in stopping order (kube-apiserver first); a marker proves a pid is still ours. */
function leadersOf(record: PersistentControlPlaneRecord): GroupLeader[] {
  const marker = `${record.directory}/`;
  // In stop order: the controller-manager first, etcd last. A record of a start without a
  // controller-manager (older assets) has none to look for.
  return [
    ...(record.pids.controllerManager === undefined ? [] : [{ pid: record.pids.controllerManager, marker }]),
    { pid: record.pids.apiServer ?? -1, marker },
    { pid: record.pids.etcd, marker },
  ];
}

async function stopRecorded(
  record: PersistentControlPlaneRecord | undefined,
  graceMs?: number,
): Promise<void> {
  if (record) await stopProcessGroups(leadersOf(record), graceMs);
}

/**
 * Stops the processes of `directory` that `record` does not name: a start killed between spawning them and
 * recording them left them running, known to no record (called under the folder's lock, where no start runs).
 */
async function stopUnrecorded(directory: string, record?: PersistentControlPlaneRecord): Promise<void> {
  const marker = `${directory}/`;
  const recorded = new Set(Object.values(record?.pids ?? {}));
  const orphans = processesMarked(marker).filter((pid) => !recorded.has(pid));
  await stopProcessGroups(orphans.map((pid) => ({ pid, marker })));
}

/** Waits for running processes (e.g. of a start a crash interrupted) to become healthy. */
async function becomesHealthy(
  record: PersistentControlPlaneRecord,
  certificates: ControlPlaneCertificates,
  props: Pick<PersistentControlPlaneProps, "startTimeoutMs" | "signal">,
): Promise<boolean> {
  const timeoutMs = props.startTimeoutMs ?? 90_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    props.signal?.throwIfAborted();
    if (await apiServerReady(serverOf(record), certificates)) return true;
    if (Date.now() > deadline || !leadersOf(record).every(({ pid, marker }) => isProcessAlive(pid, marker)))
      return false;
    await sleep(200);
  }
}

/** The running control plane of `record`; (re)writes its `kubeconfig` file, which people may use. */
async function described(
  record: PersistentControlPlaneRecord,
  certificates: ControlPlaneCertificates,
  adopted: boolean,
): Promise<PersistentControlPlane> {
  const server = serverOf(record);
  const kubeConfig = adminKubeConfig(server, certificates);
  // Atomically: people and tests read it while the engine (re)writes it (run 29 read it empty).
  await writeFileAtomically(join(record.directory, "kubeconfig"), kubeconfigYaml(kubeConfig), {
    mode: 0o600,
  });
  return { directory: record.directory, server, record, adopted, kubeConfig };
}

/** The record of `directory`; `undefined` if there is none yet; throws `ENOENT` if the folder is missing. */
async function readRecord(directory: string): Promise<PersistentControlPlaneRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(directory, recordFile), "utf8")) as PersistentControlPlaneRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await readdir(directory); // the folder itself missing throws ENOENT
    return undefined;
  }
}

/** Starts the controller-manager a start cut short left out, beside the running etcd and kube-apiserver; records it. */
async function finishStart(
  record: PersistentControlPlaneRecord,
  certificates: ControlPlaneCertificates,
  props: PersistentControlPlaneProps,
): Promise<PersistentControlPlaneRecord> {
  let finished = record;
  let started: ManagedProcess | undefined;
  await stopUnrecorded(record.directory, record);
  try {
    await launchControllerManager(
      {
        assets: props.assets,
        directory: record.directory,
        ports: record.ports,
        certificates,
        timeoutMs: props.startTimeoutMs ?? 90_000,
        ...(props.signal ? { signal: props.signal } : {}),
        ...(props.log ? { log: props.log } : {}),
      },
      serverOf(record),
      async (process) => {
        started = process;
        finished = { ...record, pids: { ...record.pids, controllerManager: process.pid } };
        await writeRecord(finished);
        return process;
      },
    );
    return finished;
  } catch (error) {
    await started?.stop();
    throw startError(error, started ? [started] : []);
  }
}

/** Writes the record atomically: a crash leaves the old or the new one. */
async function writeRecord(record: PersistentControlPlaneRecord): Promise<void> {
  await writeFileAtomically(join(record.directory, recordFile), `${JSON.stringify(record, null, 2)}\n`);
}
