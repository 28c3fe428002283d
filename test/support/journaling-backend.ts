/**
 * A backend module for `--backend test/support/journaling-backend.ts`: the built-in simulated backend with
 * every call journaled, so a test can tell from outside which replica called the backend about which
 * cluster, and when — e.g. that two replicas of a sharded engine never act on one cluster at once.
 *
 * Options: `journal=<file>` and `replica=<name>` (both required); every other `--backend-option` goes to the
 * simulated backend unchanged (`delay`, `provisionDelay`, `failureRate`, …). Replicas started with the same
 * `--state-dir` and `--backend` share one state folder, hence one set of simulated clusters. The backend
 * keeps the name `simulated`, so it serves ProviderConfigs with `backend: simulated`.
 *
 * Journal: JSON lines, appended synchronously, so whatever was written survives a kill -9 right after.
 * One line when a call begins (a {@link BackendCall} without `end`) and one when it ends (the same with
 * `end`, `endSeq`, `ok` and maybe `error`); `pid` and `startSeq` pair them. A call whose process was
 * killed during it has only its first line. Give each replica a file of its own (lines of several processes never interleave) and
 * read them together with {@link readJournals}.
 */

import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { BackendFactory, ClusterBackend } from "../../src/api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../../src/api/backend-contract.ts";
import type { Clock } from "../../src/api/clock.ts";
import { createBackend as createSimulatedBackend } from "../../src/providers/simulated.ts";

/** One backend call, as journaled (its last line). */
export interface BackendCall {
  /** `--backend-option replica=…` of the process that made the call. */
  readonly replica: string;
  /** The process that made it (a replica started again under its name is another process). */
  readonly pid: number;
  /** The ClusterBackend method, e.g. `create`. */
  readonly method: string;
  /**
   * The Cluster's `metadata.uid`, which the backend keys its clusters by (a Cluster deleted and made
   * again under the same name is another cluster); null for calls about no cluster (`supportedVersions`,
   * `traits`, `close`).
   */
  readonly cluster: string | null;
  /** `<namespace>/<name>` of that Cluster, for people reading a failure. */
  readonly clusterName?: string;
  /** When the call began and ended (ms since the epoch, the process's clock: Date.now()). */
  readonly start: number;
  /** Absent while the call runs, and for ever if its process was killed during it. */
  readonly end?: number;
  /**
   * The numbers of the call's start and end lines among all its process's lines: they order one
   * process's calls exactly where their milliseconds tie (a call that ends and the next that begins).
   */
  readonly startSeq: number;
  readonly endSeq?: number;
  /** Whether it returned (true) or threw (false); absent with `end`. */
  readonly ok?: boolean;
  /** The message it threw. */
  readonly error?: string;
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/** Makes the simulated backend from the other options, journaling to `journal` as `replica`. */
export const createBackend: BackendFactory = async (context) => {
  const { journal, replica, ...simulatedOptions } = context.options;
  if (!journal || !replica) {
    throw new Error(
      "journaling backend: give --backend-option journal=<file> and --backend-option replica=<name>",
    );
  }
  const inner = await createSimulatedBackend({ ...context, options: simulatedOptions });
  return journaled(inner, journalWriter(resolve(journal), replica, context.clock));
};

/** Every method of `inner`, each call journaled by `journal`. */
function journaled(inner: ClusterBackend, journal: JournalWriter): ClusterBackend {
  const { trustOidcIssuers, close } = inner;
  return {
    name: inner.name,
    capabilities: inner.capabilities,
    supportedVersions: (config) =>
      journal.aroundSync("supportedVersions", undefined, () => inner.supportedVersions(config)),
    traits: (config) => journal.aroundSync("traits", undefined, () => inner.traits(config)),
    observe: (target) => journal.around("observe", target, () => inner.observe(target)),
    create: (target, version) => journal.around("create", target, () => inner.create(target, version)),
    update: (target, version) => journal.around("update", target, () => inner.update(target, version)),
    delete: (target) => journal.around("delete", target, () => inner.delete(target)),
    adminAccess: (target) => journal.around("adminAccess", target, () => inner.adminAccess(target)),
    ...(trustOidcIssuers
      ? {
          trustOidcIssuers: (target, issuers) =>
            journal.around("trustOidcIssuers", target, () => trustOidcIssuers.call(inner, target, issuers)),
        }
      : {}),
    ...(close ? { close: () => journal.around("close", undefined, () => close.call(inner)) } : {}),
  };
}

interface JournalWriter {
  around<T>(method: string, target: ClusterTarget | undefined, run: () => Promise<T>): Promise<T>;
  aroundSync<T>(method: string, target: ClusterTarget | undefined, run: () => T): T;
}

/** Appends a line to `file` when a call begins and one when it ends. */
function journalWriter(file: string, replica: string, clock: Clock): JournalWriter {
  mkdirSync(dirname(file), { recursive: true });
  let lines = 0;
  const append = (line: BackendCall) => appendFileSync(file, `${JSON.stringify(line)}\n`);
  /** Journals the start; returns what journals the end. */
  const begin = (method: string, target: ClusterTarget | undefined) => {
    const began: BackendCall = {
      replica,
      pid: process.pid,
      method,
      cluster: target?.uid ?? null,
      ...(target ? { clusterName: `${target.namespace}/${target.name}` } : {}),
      start: clock.now(),
      startSeq: ++lines,
    };
    append(began);
    return (failure?: { error: unknown }) =>
      append({
        ...began,
        end: clock.now(),
        endSeq: ++lines,
        ok: failure === undefined,
        ...(failure ? { error: messageOf(failure.error) } : {}),
      });
  };
  return {
    async around(method, target, run) {
      const end = begin(method, target);
      try {
        const result = await run();
        end();
        return result;
      } catch (error) {
        end({ error });
        throw error;
      }
    },
    aroundSync(method, target, run) {
      const end = begin(method, target);
      try {
        const result = run();
        end();
        return result;
      } catch (error) {
        end({ error });
        throw error;
      }
    },
  };
}

/**
 * The calls journaled in `paths`, ordered by start: each call once, with its end if it was journaled. A
 * missing file holds no call (its replica never called the backend); a last line without its newline
 * (torn by a kill during the write) is left out.
 */
export function readJournals(paths: readonly string[]): BackendCall[] {
  const calls = new Map<string, BackendCall>();
  for (const path of paths) {
    for (const line of completeLines(path)) {
      const call = JSON.parse(line) as BackendCall;
      const key = `${call.replica}/${call.pid}/${call.startSeq}`;
      if (call.end !== undefined || !calls.has(key)) calls.set(key, call);
    }
  }
  return [...calls.values()].sort((a, b) => a.start - b.start || a.pid - b.pid || a.startSeq - b.startSeq);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function completeLines(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return text.split("\n").slice(0, -1).filter(Boolean);
}
