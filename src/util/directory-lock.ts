/** An exclusive lock on a folder (a `lock` file created with O_EXCL), so that whoever starts or removes what lives there does it alone. */
import { randomUUID } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isProcessAlive } from "./process-groups.ts";

/** How long to wait for a lock and when a held one counts as abandoned. */
export interface DirectoryLockProps {
  /** Wait this long for a lock someone else holds; 0 tries once. */
  readonly waitMs: number;
  /** A lock this old counts as abandoned even if its owner process still runs (an owner that forgot it). */
  readonly staleAfterMs: number;
  /** Stops waiting (throwing the abort reason) when aborted. */
  readonly signal?: AbortSignal;
}

interface LockFile {
  readonly pid: number;
  readonly token: string;
  /** When it was taken, ms since the epoch. */
  readonly at: number;
}

/** Releases a lock; a no-op once the lock file is gone (e.g. with its folder). */
export type ReleaseLock = () => Promise<void>;

/**
 * Takes the lock of `directory`, waiting up to `waitMs` for its holder. Returns the release function,
 * or `undefined` when someone else still holds it.
 *
 * Guarantees: at most one holder at a time among holders that release within `staleAfterMs`; a lock
 * whose owner process is gone is taken over at once; the lock appears whole (written beside it, then
 * linked to its name), so a taker killed with kill -9 never leaves a lock that names no owner.
 * Caveats: throws the file-system error (code `ENOENT`) when `directory` does not exist: a lock never
 * creates the folder it protects. A taker killed between writing and linking leaves its `lock.<token>.tmp`.
 */
export async function acquireDirectoryLock(
  directory: string,
  props: DirectoryLockProps,
): Promise<ReleaseLock | undefined> {
  const path = join(directory, "lock");
  const mine: LockFile = { pid: process.pid, token: randomUUID(), at: Date.now() };
  const deadline = Date.now() + props.waitMs;
  for (;;) {
    if (await place(path, mine)) return () => release(path, mine.token);
    const held = await readLock(path);
    const abandoned = held && (!isProcessAlive(held.pid) || Date.now() - held.at > props.staleAfterMs);
    if (abandoned) {
      await release(path, held.token); // then try again at once
      continue;
    }
    if (Date.now() >= deadline) return undefined;
    props.signal?.throwIfAborted();
    await sleep(100);
  }
}

/**
 * Puts `lock` at `path` unless a lock is there: the whole file first, beside it, then a hard link to `path`
 * (which, like O_EXCL, fails if `path` exists). Why not O_EXCL alone: a kill between its create and its
 * write leaves an empty lock, whose owner no one can tell, so no one ever takes it over.
 */
async function place(path: string, lock: LockFile): Promise<boolean> {
  const whole = `${path}.${lock.token}.tmp`;
  await writeFile(whole, JSON.stringify(lock), { flag: "wx" });
  try {
    await link(whole, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(whole).catch(() => {});
  }
}

async function readLock(path: string): Promise<LockFile | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as LockFile;
  } catch {
    return undefined; // just released (or left empty by a taker killed mid-write before locks were linked whole)
  }
}

async function release(path: string, token: string): Promise<void> {
  const held = await readLock(path);
  if (held?.token !== token) return;
  await unlink(path).catch(() => {});
}
