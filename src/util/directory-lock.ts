/** An exclusive lock on a folder (a `lock` file created with O_EXCL), so that whoever starts or removes what lives there does it alone. */
import { randomUUID } from "node:crypto";
import { readFile, unlink, writeFile } from "node:fs/promises";
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
 * whose owner process is gone is taken over at once.
 * Caveats: throws the file-system error (code `ENOENT`) when `directory` does not exist: a lock never
 * creates the folder it protects.
 */
export async function acquireDirectoryLock(
  directory: string,
  props: DirectoryLockProps,
): Promise<ReleaseLock | undefined> {
  const path = join(directory, "lock");
  const mine: LockFile = { pid: process.pid, token: randomUUID(), at: Date.now() };
  const deadline = Date.now() + props.waitMs;
  for (;;) {
    try {
      await writeFile(path, JSON.stringify(mine), { flag: "wx" });
      return () => release(path, mine.token);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
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

async function readLock(path: string): Promise<LockFile | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as LockFile;
  } catch {
    return undefined; // just released, or being written this instant
  }
}

async function release(path: string, token: string): Promise<void> {
  const held = await readLock(path);
  if (held?.token !== token) return;
  await unlink(path).catch(() => {});
}
