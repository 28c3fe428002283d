/**
 * This backend's folder of one kind cluster, `<state>/clusters/<kind name>/`: the record of what it made, and the
 * output and exit status of the create and MetalLB install that run detached from it. Reading and writing only.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ClusterTarget } from "../../api/backend.ts";
import type { Clock } from "../../api/clock.ts";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";

/** What this backend remembers of one cluster: written when its create starts, removed by delete. */
export interface KindRecord {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** The kind cluster's name. */
  readonly cluster: string;
  readonly version: string;
  readonly image: string;
  /** The create wrapper's pid (leader of its own process group). */
  readonly pid: number;
  /** When the create started (ISO 8601); tells one create of a cluster from a later one. */
  readonly startedAt: string;
  /**
   * Whether the cluster's kube-apiserver reads the authentication configuration in the cluster's `authn/`
   * folder (OIDC trust). Clusters created before this backend set it up have no such file.
   */
  readonly oidc?: boolean;
  /** Adopted: it ran before this backend knew it (named by {@link KIND_NAME_ANNOTATION}); never deleted by it. */
  readonly adopted?: boolean;
  /**
   * Where its OIDC trust lives: `volume`, a Docker volume written through Docker (see authn-volume.ts);
   * absent: the cluster's `authn/` folder here, mounted from the Docker host (clusters made before volumes).
   */
  readonly authn?: "volume";
  /**
   * Taken over: made for this Cluster by another provider (openMCP's kind provider names it the same way), found
   * running with no record; this backend serves and deletes it like its own, but installs nothing into it.
   */
  readonly takenOver?: boolean;
  /** Waiting for a create slot ({@link KindBackendOptions.parallelCreates}); no process yet. */
  readonly queued?: boolean;
  /** Which try of the create this is, from 1 (absent: 1); see {@link CREATE_ATTEMPTS}. */
  readonly attempt?: number;
  /** Why the previous try failed, shown while this one runs. */
  readonly lastFailure?: string;
}

/** What this backend remembers of a cluster's MetalLB install: written when it starts. */
export interface MetallbRecord {
  /** The install wrapper's pid (leader of its own process group); 0 when it could not start. */
  readonly pid: number;
  /** The pool's addresses, `first-last`; absent when none could be chosen. */
  readonly pool?: string;
}

/** What a record says beyond whose cluster it is and when it started. */
export type RecordFields = Omit<KindRecord, "uid" | "namespace" | "name" | "cluster" | "startedAt">;

/** The commands a cluster's folder records the exit status and output of. */
export type Detached = "create" | "metallb";

/** The clusters' folders below `<state>/clusters`. */
export class ClusterFolders {
  readonly directory: string;
  readonly #clock: Clock;

  constructor(directory: string, clock: Clock) {
    this.directory = directory;
    this.#clock = clock;
  }

  folder(cluster: string): string {
    return join(this.directory, cluster);
  }

  /** A file of the cluster's folder. */
  path(cluster: string, file: string): string {
    return join(this.directory, cluster, file);
  }

  /** The kind names with a folder; none when the state folder is gone (a waiting create's timer outlives it). */
  clusters(): string[] {
    try {
      return readdirSync(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }

  readRecord(cluster: string): KindRecord | undefined {
    return readJson<KindRecord>(this.path(cluster, "record.json"));
  }

  /** Writes what this backend remembers of the target's kind cluster, started now. */
  writeRecord(target: ClusterTarget, cluster: string, fields: RecordFields): void {
    const record: KindRecord = {
      uid: target.uid,
      namespace: target.namespace,
      name: target.name,
      cluster,
      ...fields,
      startedAt: new Date(this.#clock.now()).toISOString(),
    };
    writeFileAtomicallySync(this.path(cluster, "record.json"), JSON.stringify(record, null, 2));
  }

  readMetallbRecord(cluster: string): MetallbRecord | undefined {
    return readJson<MetallbRecord>(this.path(cluster, "metallb.json"));
  }

  writeMetallbRecord(cluster: string, record: MetallbRecord): void {
    writeFileAtomicallySync(this.path(cluster, "metallb.json"), JSON.stringify(record));
  }

  /** Where the wrapper of the cluster's `command` writes its exit status. */
  exitFile(cluster: string, command: Detached): string {
    return this.path(cluster, `${command}.exit`);
  }

  /**
   * The exit status of the cluster's `command`; `running` while there is none and `alive` says its wrapper
   * runs; undefined when it went with none (killed, or the machine restarted).
   */
  exitStatus(cluster: string, command: Detached, alive: () => boolean): string | "running" | undefined {
    const file = this.exitFile(cluster, command);
    const code = readText(file).trim();
    if (code !== "") return code;
    if (alive()) return "running";
    return readText(file).trim() || undefined; // it may have finished between the two looks
  }

  /** When the cluster's `command` ended (its wrapper wrote the exit status), in epoch ms; 0 if it has not. */
  exitedAt(cluster: string, command: Detached): number {
    try {
      return statSync(this.exitFile(cluster, command)).mtimeMs;
    } catch {
      return 0;
    }
  }

  /** A text file of the cluster's folder; "" when there is none. */
  text(cluster: string, file: string): string {
    return readText(this.path(cluster, file));
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}
