/**
 * Where the `simulated` backend keeps its clusters: in memory, or one small file per cluster in a folder
 * (`clusters/<uid>.json`) plus an append-only `created.log`, so every change costs O(1) however many
 * clusters there are, other processes on the same folder (a restarted or failed-over controller) see each
 * change at once, and a kill -9 leaves every record whole (each is written atomically).
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicallySync } from "../util/atomic-file.ts";

/** One simulated cluster's record. */
export interface SimulatedRecord {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly version: string;
  /** `hibernating` and `waking` complete after their delays; `hibernated` lasts until a wake (contract 1.6). */
  readonly phase: "provisioning" | "updating" | "deleting" | "hibernating" | "hibernated" | "waking";
  /** When the current phase began (ms since epoch); the phase completes after its delay. */
  readonly since: number;
}

/** The records of one backend instance (or of every instance on the same folder). */
export interface SimulatedStore {
  get(uid: string): SimulatedRecord | undefined;
  put(record: SimulatedRecord): void;
  /** Forgets a cluster (its deletion completed). */
  remove(uid: string): void;
  all(): SimulatedRecord[];
  /**
   * Notes a create about to make a cluster for `uid`, before its record is put; {@link created} counts the uids
   * noted, across restarts on a folder: a create cut short between the two (kill -9) and made again counts once.
   */
  recordCreate(uid: string): void;
  created(): number;
}

/** Records in memory: they go with the process. */
export function memoryStore(): SimulatedStore {
  const records = new Map<string, SimulatedRecord>();
  const created = new Set<string>();
  return {
    get: (uid) => records.get(uid),
    put: (record) => void records.set(record.uid, record),
    remove: (uid) => void records.delete(uid),
    all: () => [...records.values()],
    recordCreate: (uid) => void created.add(uid),
    created: () => created.size,
  };
}

/** Records in `directory` (made if missing). */
export function folderStore(directory: string): SimulatedStore {
  const clusters = join(directory, "clusters");
  const createdLog = join(directory, "created.log");
  mkdirSync(clusters, { recursive: true });
  const path = (uid: string) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(uid))
      throw new Error(`simulated backend: "${uid}" is not a Cluster uid`);
    return join(clusters, `${uid}.json`);
  };
  const read = (file: string): SimulatedRecord | undefined => {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as SimulatedRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  };
  return {
    get: (uid) => read(path(uid)),
    put(record) {
      const file = path(record.uid);
      writeFileAtomicallySync(file, JSON.stringify(record));
    },
    remove: (uid) => rmSync(path(uid), { force: true }),
    all: () =>
      readdirSync(clusters)
        .filter((file) => file.endsWith(".json"))
        .flatMap((file) => read(join(clusters, file)) ?? []),
    recordCreate: (uid) => appendFileSync(createdLog, `${uid}\n`),
    created() {
      try {
        return new Set(readFileSync(createdLog, "utf8").split("\n").filter(Boolean)).size;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
        throw error;
      }
    },
  };
}
