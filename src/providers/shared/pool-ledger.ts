/**
 * What a backend that keeps warm pools (contract 1.5) records beside its clusters: which cluster keys are pool
 * members (of which pool and version) and which Cluster uid each bound member serves. In memory, or one small
 * file per record in a folder (`members/<id>.json`, `bindings/<Cluster uid>`), so a kill -9 leaves every record
 * whole and a restarted engine (or another on the same folder) sees each change at once.
 *
 * A backend keys its clusters as before; it asks {@link PoolLedger.keyOf} first, so a bound Cluster's uid
 * leads to its member's cluster: the record of the binding stands in for a rename the infrastructure cannot do.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { PoolMemberSpec } from "../../api/backend-contract.ts";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";

/** A pool member as recorded, and the Cluster uid it is bound to (if any). */
export interface LedgerMember extends PoolMemberSpec {
  readonly boundTo?: string;
}

/** The records of one backend instance (or of every instance on the same folder). */
export interface PoolLedger {
  /** Records a member before its cluster is made (so a crash leaves a member the pool finds, never an orphan). */
  addMember(member: PoolMemberSpec): void;
  member(id: string): PoolMemberSpec | undefined;
  /** The members of `pool`, each with the uid bound to it. */
  members(pool: string): LedgerMember[];
  /** Records that Cluster `uid` is served by member `id`. */
  bind(uid: string, id: string): void;
  /** The cluster key a Cluster uid leads to: its bound member's id, else the uid itself. */
  keyOf(uid: string): string;
  /** Forgets member `id` and every binding to it (its cluster is gone). */
  forget(id: string): void;
}

const safeKey = (key: string) => {
  if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(key)) throw new Error(`pool ledger: "${key}" is not a cluster key`);
  return key;
};

/** Records in memory: they go with the process. */
export function memoryPoolLedger(): PoolLedger {
  const members = new Map<string, PoolMemberSpec>();
  const bindings = new Map<string, string>();
  const boundTo = (id: string) => [...bindings].find(([, member]) => member === id)?.[0];
  return {
    addMember: (member) => void members.set(safeKey(member.id), member),
    member: (id) => members.get(id),
    members: (pool) =>
      [...members.values()]
        .filter((member) => member.pool === pool)
        .map((member) => {
          const uid = boundTo(member.id);
          return uid === undefined ? member : { ...member, boundTo: uid };
        }),
    bind: (uid, id) => void bindings.set(safeKey(uid), id),
    keyOf: (uid) => bindings.get(uid) ?? uid,
    forget(id) {
      members.delete(id);
      for (const [uid, member] of bindings) if (member === id) bindings.delete(uid);
    },
  };
}

/** Records in `directory` (made if missing). */
export function folderPoolLedger(directory: string): PoolLedger {
  const membersDirectory = join(directory, "members");
  const bindingsDirectory = join(directory, "bindings");
  mkdirSync(membersDirectory, { recursive: true });
  mkdirSync(bindingsDirectory, { recursive: true });
  const readIfThere = (file: string): string | undefined => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  };
  const member = (id: string): PoolMemberSpec | undefined => {
    const text = readIfThere(join(membersDirectory, `${safeKey(id)}.json`));
    return text === undefined ? undefined : (JSON.parse(text) as PoolMemberSpec);
  };
  const bindings = (): Array<[uid: string, id: string]> =>
    readdirSync(bindingsDirectory)
      .filter((file) => !file.endsWith(".tmp"))
      .flatMap((uid): Array<[string, string]> => {
        const id = readIfThere(join(bindingsDirectory, uid));
        return id === undefined ? [] : [[uid, id]];
      });
  return {
    addMember: (spec) =>
      writeFileAtomicallySync(join(membersDirectory, `${safeKey(spec.id)}.json`), JSON.stringify(spec)),
    member,
    members(pool) {
      const bound = new Map(bindings().map(([uid, id]) => [id, uid]));
      return readdirSync(membersDirectory)
        .filter((file) => file.endsWith(".json"))
        .flatMap((file) => member(file.slice(0, -".json".length)) ?? [])
        .filter((spec) => spec.pool === pool)
        .map((spec) => {
          const uid = bound.get(spec.id);
          return uid === undefined ? spec : { ...spec, boundTo: uid };
        });
    },
    bind: (uid, id) => writeFileAtomicallySync(join(bindingsDirectory, safeKey(uid)), id),
    keyOf: (uid) => readIfThere(join(bindingsDirectory, safeKey(uid))) ?? uid,
    forget(id) {
      // Bindings first: a crash in between leaves a member record, which the pool finds and deletes again.
      for (const [uid, member] of bindings())
        if (member === id) rmSync(join(bindingsDirectory, uid), { force: true });
      rmSync(join(membersDirectory, `${safeKey(id)}.json`), { force: true });
    },
  };
}
